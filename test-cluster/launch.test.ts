import { readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Launch } from '../scripts/cluster/launch.js';
import type { LocalCluster } from '../scripts/cluster/local-cluster.js';
import { startLocalCluster } from '../scripts/cluster/local-cluster.js';
import type { RedisServer } from '../scripts/cluster/redis-server.js';
import { startRedis } from '../scripts/cluster/redis-server.js';

/** The last core: on a machine of several, not where a process would run unpinned (every core). */
const CORE = String(availableParallelism() - 1);
/** As the cluster bench starts its servers (bench/lib/cpu-sets.ts: onServerCores). */
const pinned: Launch = (command) => ['taskset', '-c', CORE, ...command];

let redis: RedisServer;
let cluster: LocalCluster;

beforeAll(async () => {
  redis = await startRedis({ launch: pinned });
  cluster = await startLocalCluster({ redisUrl: redis.url, processes: 1, launch: pinned });
}, 180_000);

afterAll(async () => {
  await cluster?.stop();
  await redis?.stop();
}, 60_000);

/** What the kernel says of a process: its name and the cores it may run on. */
function processStatus(pid: number): { name: string; cores: string } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return { name: /^Name:\s+(.+)$/m.exec(status)![1]!, cores: /^Cpus_allowed_list:\s+(.+)$/m.exec(status)![1]! };
}

describe('a local cluster started through a launch wrapper (taskset, as the cluster bench does)', () => {
  it('runs redis-server, the Restate server and the service process on the given core, each PID the server itself', async () => {
    expect(processStatus(redis.pid)).toEqual({ name: 'redis-server', cores: CORE });
    expect(processStatus(cluster.restate.pid)).toEqual({ name: 'restate-server', cores: CORE });
    // Node names its main thread, so the process is known by its executable.
    expect(processStatus(cluster.processes[0]!.pid).cores).toBe(CORE);
    expect(readlinkSync(`/proc/${cluster.processes[0]!.pid}/exe`)).toBe(realpathSync(process.execPath));
    const answer = await fetch(`${cluster.url}/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ session_id: 'pinned', event: 'screen_view', screen: 'welcome' }),
    });
    expect(answer.status).toBe(200);
  });
});
