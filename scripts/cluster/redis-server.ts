import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Launch } from './launch.js';
import { asGiven, launched } from './launch.js';

/** Where the next port in CLUSTER_PORT_RANGE is looked for. */
let nextInRange = 0;

async function canListen(port: number): Promise<boolean> {
  const server = createServer();
  const bound = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (bound) await new Promise<void>((resolve) => server.close(() => resolve()));
  return bound;
}

/**
 * A free loopback port: bound, read, released. With CLUSTER_PORT_RANGE=`low-high` set (a machine
 * shared with others), the next free port of that range, never one handed out before.
 */
export async function freePort(): Promise<number> {
  const range = /^(\d+)-(\d+)$/.exec(process.env.CLUSTER_PORT_RANGE ?? '');
  if (range) {
    const low = Number(range[1]);
    const high = Number(range[2]);
    while (low + nextInRange <= high) {
      const port = low + nextInRange++;
      if (await canListen(port)) return port;
    }
    throw new Error(`no free port left in CLUSTER_PORT_RANGE ${low}-${high}`);
  }
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/**
 * The port for a server this process binds itself: 0, so the system picks a free one as it binds
 * (no window in which another socket takes it), unless CLUSTER_PORT_RANGE asks for one of its range.
 */
export async function listenPort(): Promise<number> {
  return process.env.CLUSTER_PORT_RANGE ? freePort() : 0;
}

export interface RedisServer {
  url: string;
  port: number;
  dir: string;
  pid: number;
  /** SIGKILL, then wait for the exit. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/** A real redis-server on 127.0.0.1 (the cluster tests and `npm run cluster`) with AOF everysec in a temp dir (kept across a restart on the same dir). */
export async function startRedis(
  options: { port?: number; dir?: string; fsync?: 'everysec' | 'always'; launch?: Launch } = {},
): Promise<RedisServer> {
  const port = options.port ?? (await freePort());
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'redis-test-'));
  const command = [
    'redis-server',
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'yes',
    '--appendfsync',
    options.fsync ?? 'everysec',
    '--dir',
    dir,
  ];
  const child = spawn(...launched(options.launch ?? asGiven, command), { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.includes('Ready to accept connections')) resolve();
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    pid: child.pid!,
    kill: () => end('SIGKILL'),
    stop: () => end('SIGTERM'),
  };
}
