import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { LoadJob, LoadResult } from '../load-worker.js';

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  stop(): Promise<void>;
}

/** A free loopback port: bound and released, so the server under test can take it. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/**
 * Starts a server in its own process on a free port and waits until it answers. Its output is
 * discarded, as a log shipper would drain it: the cost of writing the logs is still paid.
 */
export async function startServer(command: string[], env: Record<string, string> = {}, readyPath = '/health'): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(command[0]!, command.slice(1), {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${command.join(' ')} exited with ${child.exitCode} before answering`);
    try {
      await fetch(url + readyPath);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`${command.join(' ')} did not answer within 30 s`);
      await sleep(50);
    }
  }
  return {
    child,
    url,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Resident set size of a process in bytes, from /proc (Linux). */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) * 1024 : Number.NaN;
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const ticksPerSecond = 100;
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
}

/** Runs one autocannon job in a separate process. */
export async function runLoad(job: LoadJob): Promise<LoadResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/load-worker.ts', JSON.stringify(job)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number];
  if (code !== 0) throw new Error(`load worker failed (${code})`);
  return JSON.parse(output.trim().split('\n').at(-1)!) as LoadResult;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
