import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { MotoServer } from '../scripts/cluster/moto.js';
import { startMoto } from '../scripts/cluster/moto.js';
import { freePort } from '../scripts/cluster/redis-server.js';
import { alive } from '../scripts/cluster/upgrade.js';
import { clusterScript, npmCluster, restatectlOutput, s3Env } from './fixtures/cluster-script.js';
import { tempDataDir } from '../test/support/harness.js';

const BUCKET = 'kyc-snapshots';
const PREFIX = 'cluster-test';
const PARTITIONS = 2;
const SESSIONS = ['snap-0', 'snap-1', 'snap-2', 'snap-3', 'snap-4', 'snap-5'];
const SCREENS = ['pan_details', 'aadhaar_details', 'selfie'];

/** A log's trim point as Restate reports it (`restatectl logs describe --extra`), read apart from the script. */
async function trimPoint(nodePort: number, log: number): Promise<number> {
  const described = await restatectlOutput(nodePort, ['logs', 'describe', '--extra', String(log)]);
  return Number(/Trim Point LSN: (\d+)/.exec(described)?.[1] ?? 0);
}

describe('npm run cluster -- --snapshot: partition snapshots to an S3 store (moto) and the logs trimmed to them', () => {
  let moto: MotoServer | undefined;
  beforeAll(async () => {
    moto = await startMoto();
    await moto.createBucket(BUCKET);
  }, 60_000);
  afterAll(async () => {
    await moto?.stop();
    if (moto) expect(alive(moto.pid)).toBe(false);
  });

  it('snapshots every partition into the bucket, trims each log past 0, and every session still answers', async () => {
    const dir = tempDataDir();
    const port = await freePort();
    const env = s3Env(moto!);
    const { npm, output } = clusterScript(
      [
        '--fresh',
        '--processes',
        '1',
        '--partitions',
        String(PARTITIONS),
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
    const sendScreen = (sessionId: string, screen: string) =>
      fetch(`${base}/v1/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ session_id: sessionId, user_id: `u-${sessionId}`, event: 'screen_view', screen }),
      }).then((response) => response.status);
    const screenOf = async (sessionId: string) => {
      const response = await fetch(`${base}/api/sessions/${sessionId}`);
      expect(response.status).toBe(200);
      return ((await response.json()) as { screen: string; latest_event: { screen: string } }).latest_event.screen;
    };
    let pids: number[] = [];
    try {
      await vi.waitFor(() => expect(output()).toMatch(/Ctrl-C .* stops everything/), {
        timeout: 60_000,
        interval: 250,
      });
      pids = [...output().matchAll(/\bpid (\d+)/g)].map((match) => Number(match[1]));
      expect(output()).toContain(`Restate snapshots: s3://${BUCKET}/${PREFIX}`);
      const nodePort = Number(/node-to-node :(\d+)/.exec(output())?.[1]);
      // Events through the service: each session's journal and state in the partition it hashes to.
      for (const screen of SCREENS.slice(0, 2))
        for (const sessionId of SESSIONS) expect(await sendScreen(sessionId, screen)).toBe(200);

      const snapshot = await npmCluster(['--snapshot', '--data-dir', dir], env);
      expect(snapshot.code, snapshot.out).toBe(0);
      const lines = [
        ...snapshot.out.matchAll(
          /^partition (\d+): snapshot (snap_\w+) at LSN (\d+); log (\d+) trimmed to LSN (\d+)$/gm,
        ),
      ];
      expect(lines.map((line) => Number(line[1])).sort()).toEqual([...Array(PARTITIONS).keys()]);
      const keys = await moto!.keys(BUCKET, `${PREFIX}/`);
      for (const [, partition, snapshotId, lsn, log, trimmed] of lines) {
        // The snapshot in the bucket, under its partition and LSN, as Restate lays it out.
        expect(keys.some((key) => key.startsWith(`${PREFIX}/${partition}/`) && key.includes(snapshotId!))).toBe(true);
        expect(keys).toContain(`${PREFIX}/${partition}/latest.json`);
        expect(Number(lsn)).toBeGreaterThan(0);
        expect(Number(trimmed)).toBe(Number(lsn));
        // Restate's own account of the log, not the script's.
        expect(await trimPoint(nodePort, Number(log))).toBeGreaterThanOrEqual(Number(lsn));
      }
      // Every session answers what it was sent before the trim, and takes a new event after it.
      for (const sessionId of SESSIONS) expect(await screenOf(sessionId)).toBe(SCREENS[1]);
      for (const sessionId of SESSIONS) expect(await sendScreen(sessionId, SCREENS[2]!)).toBe(200);
      for (const sessionId of SESSIONS) expect(await screenOf(sessionId)).toBe(SCREENS[2]);

      const exited = once(npm, 'exit');
      npm.kill('SIGTERM');
      await exited;
      await vi.waitFor(() => expect(pids.filter(alive)).toEqual([]), { timeout: 30_000, interval: 200 });
    } finally {
      // A failed run must not leave its cluster behind.
      if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL');
      for (const pid of pids.filter(alive)) process.kill(pid, 'SIGKILL');
    }
  }, 120_000);

  it('with no cluster running on the data directory, says so in one line and exits 1', async () => {
    const { code, out } = await npmCluster(['--snapshot', '--data-dir', tempDataDir()], process.env);
    expect(code).toBe(1);
    expect(out.trim().split('\n')).toEqual([expect.stringMatching(/^no cluster is running on \S+/)]);
  });
});
