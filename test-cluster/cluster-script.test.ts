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

/** Long enough to be still pending once the upgrade (its build included) has ended on a busy 2-core machine. */
const REENGAGEMENT_SECONDS = 75;

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
    const npm = spawn('npm', ['run', 'cluster', '--', '--fresh', '--processes', '1', '--data-dir', tempDataDir()], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...range },
    });
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
      // Started as `npm start` starts the service: its heap held to the budget's share (docs/reference/limits.md).
      const servicePid = Number(/service process pid (\d+)/.exec(out)?.[1]);
      expect(readFileSync(`/proc/${servicePid}/cmdline`, 'utf8').split('\0')).toContain('--max-old-space-size=768');
      // The service process, the Restate node, redis-server and the script hosting the proxies.
      expect(out).toMatch(/service process pid \d+/);
      expect(out).toMatch(/Restate node \S+ pid \d+/);
      expect(out).toMatch(/redis-server pid \d+/);
      expect(out).toMatch(
        new RegExp(
          `this script pid \\d+: the proxy http://127\\.0\\.0\\.1:${port} and the endpoint proxy 127\\.0\\.0\\.1:\\d+`,
        ),
      );
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

  it('--upgrade rolls the built code out as a new release and retires the running one; a pending timer fires once, on the new release', async () => {
    const dir = tempDataDir();
    const env = {
      ...process.env,
      CLUSTER_PORT_RANGE: undefined,
      REENGAGEMENT_INACTIVITY_SECONDS: String(REENGAGEMENT_SECONDS),
    };
    const port = await freePort();
    const npm = spawn(
      'npm',
      ['run', 'cluster', '--', '--fresh', '--processes', '1', '--port', String(port), '--data-dir', dir],
      { stdio: ['ignore', 'pipe', 'pipe'], env },
    );
    let out = '';
    npm.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    npm.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const base = `http://127.0.0.1:${port}`;
    const post = (path: string, body: unknown) =>
      fetch(base + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    let pids: number[] = [];
    try {
      await vi.waitFor(() => expect(out).toMatch(/Ctrl-C .* stops everything/), { timeout: 150_000, interval: 250 });
      pids = [...out.matchAll(/\bpid (\d+)/g)].map((match) => Number(match[1]));
      const v1Pid = Number(/service process pid (\d+)/.exec(out)?.[1]);
      const admin = `http://127.0.0.1:${/admin :(\d+)/.exec(out)?.[1]}/`;
      // A reengagement armed on the running release, due after the upgrade.
      expect(
        (
          await post('/v1/events', {
            session_id: 'upgraded',
            user_id: 'u-up',
            event: 'screen_view',
            screen: 'pan_details',
          })
        ).status,
      ).toBe(200);
      expect((await post('/api/dropoff/register', { session_id: 'upgraded', reason: 'app_backgrounded' })).status).toBe(
        200,
      );
      const armedAt = Date.now();

      const upgrade = spawn('npm', ['run', 'cluster', '--', '--upgrade', '--data-dir', dir, '--release', 'v2-test'], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env,
      });
      let told = '';
      upgrade.stdout.on('data', (chunk: Buffer) => (told += chunk.toString()));
      upgrade.stderr.on('data', (chunk: Buffer) => (told += chunk.toString()));
      const [code] = await once(upgrade, 'exit');
      expect(code, told).toBe(0);
      expect(told).toMatch(/release v2-test started: pid \d+/);
      expect(told).toMatch(/release r-\w+ retired: its deployment removed/);
      expect(told).toContain('upgrade done');
      const v2Pid = Number(/release v2-test started: pid (\d+)/.exec(told)?.[1]);
      const v2Deployment = /Restate deployment (dp_\w+) takes new invocations/.exec(told)?.[1];
      pids.push(v2Pid);
      expect(Date.now() - armedAt).toBeLessThan(REENGAGEMENT_SECONDS * 1000);
      expect(alive(v1Pid)).toBe(false);
      expect(alive(v2Pid)).toBe(true);
      // One deployment left: the new release's.
      const deployments = ((await (await fetch(`${admin}deployments`)).json()) as { deployments: { id: string }[] })
        .deployments;
      expect(deployments.map((deployment) => deployment.id)).toEqual([v2Deployment]);
      // The proxy sends to the new release: it answers, and takes events.
      expect((await fetch(`${base}/health/ready`)).status).toBe(200);
      expect(
        (
          await post('/v1/events', {
            session_id: 'after-upgrade',
            user_id: 'u-up2',
            event: 'screen_view',
            screen: 'pan_details',
          })
        ).status,
      ).toBe(200);
      // The timer armed on the old release fires once, run by the new one.
      const reengagements = async () =>
        (
          (await (await fetch(`${base}/api/activity?session_id=upgraded&kind=reengagement`)).json()) as {
            items: { payload: { source?: string } }[];
          }
        ).items.filter((item) => item.payload.source === 'timer');
      await vi.waitFor(async () => expect(await reengagements()).toHaveLength(1), {
        timeout: REENGAGEMENT_SECONDS * 1000 + 30_000,
        interval: 500,
      });
      const wakes = await fetch(`${admin}query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({
          query:
            "SELECT pinned_deployment_id FROM sys_invocation WHERE target_service_key = 'upgraded' AND target_handler_name = 'wake' AND status = 'completed'",
        }),
      });
      const ran = ((await wakes.json()) as { rows: { pinned_deployment_id: string }[] }).rows;
      expect(ran.length).toBeGreaterThan(0);
      expect(ran.every((row) => row.pinned_deployment_id === v2Deployment)).toBe(true);
      const exited = once(npm, 'exit');
      npm.kill('SIGTERM');
      await exited;
      await vi.waitFor(() => expect(pids.filter(alive)).toEqual([]), { timeout: 30_000, interval: 200 });
    } finally {
      if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL');
      for (const pid of pids.filter(alive)) process.kill(pid, 'SIGKILL');
    }
  }, 300_000);
});
