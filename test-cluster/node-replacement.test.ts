import { once } from 'node:events';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { MotoServer } from '../scripts/cluster/moto.js';
import { startMoto } from '../scripts/cluster/moto.js';
import { freePort } from '../scripts/cluster/redis-server.js';
import { alive } from '../scripts/cluster/upgrade.js';
import { clusterScript, npmCluster, restatectlOutput, s3Env } from './fixtures/cluster-script.js';
import { tempDataDir } from '../test/support/harness.js';

const BUCKET = 'kyc-snapshots';
const PREFIX = 'replacement-test';
const SESSIONS = ['swap-0', 'swap-1', 'swap-2', 'swap-3'];
const SCREENS = ['pan_details', 'aadhaar_details', 'selfie'];
/** How long the cluster may take to move a dead node's partitions to the others, on a shared 2-core machine. */
const RECOVERY_MS = 45_000;

/** `restatectl status`, read apart from the script: each node's uptime by id (`offline` for a dead one). */
async function uptimes(nodePort: number): Promise<Map<number, string>> {
  const status = await restatectlOutput(nodePort, ['status']);
  return new Map([...status.matchAll(/^\s*N(\d+)(?::\d+)?\s+\S+\s+(\S+)/gm)].map((row) => [Number(row[1]), row[2]!]));
}

describe('npm run cluster -- --replace-node N: a fresh node takes the place of one that lost its disk', () => {
  let moto: MotoServer | undefined;
  beforeAll(async () => {
    moto = await startMoto();
    await moto.createBucket(BUCKET);
  }, 60_000);
  afterAll(async () => {
    await moto?.stop();
    if (moto) expect(alive(moto.pid)).toBe(false);
  });

  it('replaces node 2 after a snapshot and trim; every session answers, and the cluster survives losing node 1 after', async () => {
    const dir = tempDataDir();
    const port = await freePort();
    const env = s3Env(moto!);
    const { npm, output } = clusterScript(
      [
        '--fresh',
        '--processes',
        '1',
        '--restate-nodes',
        '3',
        '--port',
        String(port),
        '--data-dir',
        dir,
        '--snapshots-to',
        `s3://${BUCKET}/${PREFIX}`,
      ],
      env,
    );
    const base = `http://127.0.0.1:${port}`;
    // As a client following docs/how-to/production.md does while a node is down: the same Idempotency-Key on every attempt.
    // Where the test is, in the message of a wait that runs out.
    let stage = 'before the replacement';
    const deliver = async (sessionId: string, screen: string) => {
      // One key per event sent, the same on each retry of it: a screen sent again later is a new event.
      const key = `${sessionId}:${screen}:${Date.now()}`;
      await vi.waitFor(
        async () => {
          const response = await fetch(`${base}/v1/events`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'idempotency-key': key },
            body: JSON.stringify({ session_id: sessionId, user_id: `u-${sessionId}`, event: 'screen_view', screen }),
          });
          expect(response.status, `${stage}: ${sessionId} ${screen}`).toBe(200);
        },
        { timeout: RECOVERY_MS, interval: 500 },
      );
    };
    const screenOf = async (sessionId: string) => {
      let screen = '';
      await vi.waitFor(
        async () => {
          const response = await fetch(`${base}/api/sessions/${sessionId}`);
          expect(response.status, `${stage}: ${sessionId}`).toBe(200);
          screen = ((await response.json()) as { latest_event: { screen: string } }).latest_event.screen;
        },
        { timeout: RECOVERY_MS, interval: 500 },
      );
      return screen;
    };
    let pids: number[] = [];
    try {
      await vi.waitFor(() => expect(output()).toMatch(/Ctrl-C .* stops everything/), {
        timeout: 90_000,
        interval: 250,
      });
      pids = [...output().matchAll(/\bpid (\d+)/g)].map((match) => Number(match[1]));
      const nodePid = (name: string) => Number(new RegExp(`Restate node ${name} pid (\\d+)`).exec(output())?.[1]);
      const node1Port = Number(/Restate node restate-1 pid \d+: .*node-to-node :(\d+)/.exec(output())?.[1]);
      const node3Port = Number(/Restate node restate-3 pid \d+: .*node-to-node :(\d+)/.exec(output())?.[1]);
      for (const screen of SCREENS.slice(0, 2)) for (const sessionId of SESSIONS) await deliver(sessionId, screen);
      const snapshot = await npmCluster(['--snapshot', '--data-dir', dir], env);
      expect(snapshot.code, snapshot.out).toBe(0);

      // Node 2 dies with its disk: the script deletes the data directory itself.
      process.kill(nodePid('restate-2'), 'SIGKILL');
      const replaced = await npmCluster(['--replace-node', '2', '--data-dir', dir], env);
      // Stopped with the rest, whatever the replacement's end.
      const fresh = /started restate-2-r1 pid (\d+)/.exec(replaced.out);
      if (fresh !== null) pids.push(Number(fresh[1]));
      expect(replaced.code, replaced.out).toBe(0);
      expect(replaced.out).toContain(`deleting ${join(dir, 'restate-cluster', 'restate-2')}`);
      const id = Number(/restate-2-r1 is N(\d+): alive/.exec(replaced.out)?.[1]);
      expect(replaced.out).toMatch(/^N\d+ \(restate-2\) removed from the cluster$/m);
      expect(replaced.out.trim().split('\n').at(-1)).toBe('replacement done');
      // Restate's own account, not the script's: the new node is up, the old one gone from the list.
      const up = await uptimes(node1Port);
      expect(up.get(id)).toMatch(/^\d/);
      const oldId = Number(/restate-2 \(N(\d+)\)/.exec(replaced.out)?.[1]);
      expect(up.has(oldId)).toBe(false);

      stage = 'after the replacement';
      for (const sessionId of SESSIONS) expect(await screenOf(sessionId)).toBe(SCREENS[1]);
      for (const sessionId of SESSIONS) await deliver(sessionId, SCREENS[2]!);
      for (const sessionId of SESSIONS) expect(await screenOf(sessionId)).toBe(SCREENS[2]);

      // Another node lost: the copies the fresh node holds keep the cluster serving.
      process.kill(nodePid('restate-1'), 'SIGKILL');
      stage = `with node 1 killed after the replacement (${replaced.out})`;
      for (const sessionId of SESSIONS) expect(await screenOf(sessionId)).toBe(SCREENS[2]);
      for (const sessionId of SESSIONS) await deliver(sessionId, SCREENS[0]!);
      for (const sessionId of SESSIONS) expect(await screenOf(sessionId)).toBe(SCREENS[0]);
      expect((await uptimes(node3Port)).get(id)).toMatch(/^\d/);

      const exited = once(npm, 'exit');
      npm.kill('SIGTERM');
      await exited;
      await vi.waitFor(() => expect(pids.filter(alive)).toEqual([]), { timeout: 30_000, interval: 200 });
    } finally {
      // A failed run must not leave its cluster behind: the script stops every node it runs, the fresh one too.
      const script = Number(/this script pid (\d+)/.exec(output())?.[1]);
      if (alive(script)) {
        process.kill(script, 'SIGTERM');
        await vi.waitFor(() => expect(alive(script)).toBe(false), { timeout: 30_000, interval: 200 }).catch(() => {});
      }
      if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL');
      for (const pid of pids.filter(alive)) process.kill(pid, 'SIGKILL');
    }
  }, 240_000);

  it('refuses in one line for a single Restate node, and for a cluster with no snapshot destination', async () => {
    // A running script's pid file (this process's pid) over data directories the two kinds of cluster leave.
    const single = tempDataDir();
    writeFileSync(join(single, 'cluster.pid'), String(process.pid));
    const one = await npmCluster(['--replace-node', '1', '--data-dir', single], process.env);
    expect(one.code).toBe(1);
    expect(one.out.trim().split('\n')).toEqual([expect.stringMatching(/single Restate node: there is no other copy/)]);

    const unsnapshotted = tempDataDir();
    writeFileSync(join(unsnapshotted, 'cluster.pid'), String(process.pid));
    const slots = join(unsnapshotted, 'restate-cluster');
    mkdirSync(join(slots, 'restate-1'), { recursive: true });
    writeFileSync(join(slots, 'ports.json'), JSON.stringify({ nodes: [1, 2, 3].map((node) => ({ node })) }));
    writeFileSync(join(slots, 'restate-1', 'restate.toml'), 'node-name = "restate-1"\n');
    const none = await npmCluster(['--replace-node', '1', '--data-dir', unsnapshotted], process.env);
    expect(none.code).toBe(1);
    expect(none.out.trim().split('\n')).toEqual([expect.stringMatching(/no snapshot destination: .*--snapshots-to/)]);
    expect(existsSync(join(unsnapshotted, 'replace-request.json'))).toBe(false);
  }, 120_000);
});
