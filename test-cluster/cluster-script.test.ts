import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { tempDataDir } from '../test/support/harness.js';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('npm run cluster, as an operator runs it', () => {
  it('prints a PID for every process it started, takes every port from CLUSTER_PORT_RANGE, and a SIGTERM to npm itself stops every one of them', async () => {
    // A range of 300 ports above a free one: the front's port, named by no flag, comes from it too.
    const low = Math.min(await freePort(), 65_000);
    const range = { CLUSTER_PORT_RANGE: `${low}-${low + 300}` };
    const npm = spawn('npm', ['run', 'cluster', '--', '--fresh', '--processes', '1', '--data-dir', tempDataDir()], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...range } });
    let out = '';
    let pids: number[] = [];
    npm.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    npm.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    try {
      await vi.waitFor(() => expect(out).toMatch(/Ctrl-C .* stops everything/), { timeout: 150_000, interval: 250 });
      pids = [...out.matchAll(/\bpid (\d+)/g)].map((match) => Number(match[1]));
      const port = Number(/point clients at http:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1]);
      expect(port).toBeGreaterThanOrEqual(low);
      expect(port).toBeLessThanOrEqual(low + 300);
      // Started as `npm start` starts the service: its heap held to the budget's share (docs/limits.md).
      const servicePid = Number(/service process pid (\d+)/.exec(out)?.[1]);
      expect(readFileSync(`/proc/${servicePid}/cmdline`, 'utf8').split('\0')).toContain('--max-old-space-size=768');
      // The service process, the Restate node, redis-server and the script hosting the proxies.
      expect(out).toMatch(/service process pid \d+/);
      expect(out).toMatch(/Restate node \S+ pid \d+/);
      expect(out).toMatch(/redis-server pid \d+/);
      expect(out).toMatch(new RegExp(`this script pid \\d+: the proxy http://127\\.0\\.0\\.1:${port} and the endpoint proxy 127\\.0\\.0\\.1:\\d+`));
      expect(pids.length).toBeGreaterThanOrEqual(4);
      expect(pids.every(alive)).toBe(true);
      expect((await fetch(`http://127.0.0.1:${port}/health/ready`)).status).toBe(200);
      // What a supervisor or a plain `kill` sends: to npm, not to the process group.
      const exited = once(npm, 'exit');
      npm.kill('SIGTERM');
      await exited;
      await vi.waitFor(() => expect(pids.filter(alive)).toEqual([]), { timeout: 30_000, interval: 200 });
    } finally {
      // A failed run must not leave its cluster behind.
      if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL');
      for (const pid of pids.filter(alive)) process.kill(pid, 'SIGKILL');
    }
  }, 240_000);
});
