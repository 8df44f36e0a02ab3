import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../cluster/redis-server.js';

export interface ServiceProcess {
  url: string;
  pid: number;
  /** SIGTERM to its PID (SIGKILL if it is still there after the grace), then its data directory removed. */
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 15_000;

async function exited(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return true;
  const timer = new Promise<false>((resolve) => setTimeout(() => resolve(false), ms).unref());
  return Promise.race([once(child, 'exit').then(() => true), timer]);
}

/**
 * The built service as `npm start` runs it (its script line, whose `exec` makes the shell the
 * service, so the PID is the service's), on a free loopback port, with SQLite in a fresh data
 * directory. `dist/` must be built first.
 */
export async function startBuiltService(root: string, env: Record<string, string>): Promise<ServiceProcess> {
  const script = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } })
    .scripts.start;
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'kyc-fuzz-'));
  const child = spawn('sh', ['-c', script], {
    cwd: root,
    env: {
      ...process.env,
      ...env,
      HOST: '127.0.0.1',
      PORT: String(port),
      STORE: 'sqlite',
      DATA_DIR: dataDir,
      LOG_LEVEL: env.LOG_LEVEL ?? 'error',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (!(await exited(child, 0))) {
      child.kill('SIGTERM');
      if (!(await exited(child, STOP_GRACE_MS))) {
        child.kill('SIGKILL');
        await exited(child, STOP_GRACE_MS);
      }
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (true) {
    if (await exited(child, 0)) {
      await stop();
      throw new Error(`the service exited (code ${child.exitCode}) before answering ${url}/health`);
    }
    const healthy = await fetch(`${url}/health`).then(
      (res) => res.ok,
      () => false,
    );
    if (healthy) return { url, pid: child.pid!, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the service did not answer ${url}/health within ${READY_TIMEOUT_MS / 1000} s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
