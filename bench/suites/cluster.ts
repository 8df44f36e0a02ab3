import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalCluster } from '../../scripts/cluster/local-cluster.js';
import { startRedis } from '../../scripts/cluster/redis-server.js';
import { RedisActivityLog } from '../../src/store/redis-activity-log.js';
import type { LoadResult } from '../load-worker.js';
import type { ServerProcess } from '../lib/processes.js';
import { runLoad } from '../lib/processes.js';
import { median, percentile, round, table } from '../lib/stats.js';
import { startService } from '../lib/targets.js';

export interface ClusterBenchOptions {
  rounds: number;
  warmupSeconds: number;
  durationSeconds: number;
  connections: number;
  sessions: number;
  /** Sequential calls timed one by one for the per-event breakdown. */
  samples: number;
}

interface Target {
  name: string;
  url: string;
}

const timed = async (count: number, call: (index: number) => Promise<unknown>): Promise<{ p50: number; p99: number }> => {
  const durations: number[] = [];
  for (let index = 0; index < count; index += 1) {
    const started = performance.now();
    await call(index);
    durations.push(performance.now() - started);
  }
  durations.sort((a, b) => a - b);
  return { p50: round(percentile(durations, 50), 2), p99: round(percentile(durations, 99), 2) };
};

const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (response) => {
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`${url}: ${response.status}`);
  });

/**
 * Cluster mode (SESSION_HOST=restate, ACTIVITY_LOG=redis://) against the single-process modes,
 * same load generator, interleaved rounds; then one event's cost taken apart with sequential
 * calls: the Restate round trip alone (a read through the ingress), a whole command, and the
 * Redis write of one activity item in-process.
 */
export async function clusterSuite(options: ClusterBenchOptions): Promise<{ markdown: string; breakdown: string }> {
  const redis = await startRedis({ dir: mkdtempSync(join(tmpdir(), 'bench-redis-')) });
  const singles: ServerProcess[] = [];
  const clusters: Awaited<ReturnType<typeof startLocalCluster>>[] = [];
  try {
    singles.push(await startService({ LOG_LEVEL: 'warn' }), await startService({ LOG_LEVEL: 'warn', ACTIVITY_LOG: redis.url, ACTIVITY_RETENTION_ITEMS: '100000' }));
    // One cluster at a time would double the Restate servers' idle cost: both stay up, as the single targets do.
    clusters.push(await startLocalCluster({ redisUrl: redis.url, processes: 1 }), await startLocalCluster({ redisUrl: redis.url, processes: 2 }));
    const targets: Target[] = [
      { name: 'one process, STORE=memory', url: singles[0]!.url },
      { name: 'one process, ACTIVITY_LOG=redis://', url: singles[1]!.url },
      { name: 'SESSION_HOST=restate, 1 service process', url: clusters[0]!.url },
      { name: 'SESSION_HOST=restate, 2 service processes', url: clusters[1]!.url },
    ];
    const results = new Map<string, LoadResult[]>(targets.map((target) => [target.name, []]));
    const job = (target: Target) => ({ url: target.url, method: 'POST' as const, path: '/v1/events', connections: options.connections, sessions: options.sessions, body: 'event' as const });
    for (const target of targets) await runLoad({ ...job(target), durationSeconds: options.warmupSeconds });
    for (let round_ = 0; round_ < options.rounds; round_ += 1) {
      for (const target of targets) results.get(target.name)!.push(await runLoad({ ...job(target), durationSeconds: options.durationSeconds }));
    }
    const markdown = table(
      ['target', 'events/s (median)', 'p50 ms', 'p99 ms', 'failed requests'],
      targets.map((target) => {
        const runs = results.get(target.name)!;
        return [target.name, round(median(runs.map((r) => r.requestsPerSecond))), median(runs.map((r) => r.latencyP50)), median(runs.map((r) => r.latencyP99)), runs.reduce((n, r) => n + r.errors + r.non2xx, 0)];
      }),
    );

    // One event taken apart, sequentially, on an idle cluster (one service process, no proxy).
    const direct = `http://127.0.0.1:${clusters[0]!.processes[0]!.port}`;
    const single = singles[0]!.url;
    await post(`${direct}/v1/events`, { session_id: 'timed', event: 'screen_view', screen: 'pan_details' });
    const wholeCluster = await timed(options.samples, (index) => post(`${direct}/v1/events`, { session_id: 'timed', event: 'screen_view', screen: `s${index % 10}` }));
    const restateRead = await timed(options.samples, () => fetch(`${direct}/api/sessions/timed`).then((response) => response.arrayBuffer()));
    const wholeSingle = await timed(options.samples, (index) => post(`${single}/v1/events`, { session_id: 'timed', event: 'screen_view', screen: `s${index % 10}` }));
    const log = new RedisActivityLog({ url: redis.url, capacity: 1000, key: '{bench-activity}' });
    await log.ready;
    const redisWrite = await timed(options.samples, async (index) => {
      log.append({ kind: 'event', at: Date.now(), session_id: 'timed', user_id: null, payload: { n: index }, trace: { trace_id: 't', request_id: 'r' } });
      await log.commit();
    });
    log.close();
    const breakdown = table(
      ['one event, sequential (ms)', 'p50', 'p99'],
      [
        ['POST /v1/events, one process, STORE=memory', wholeSingle.p50, wholeSingle.p99],
        ['POST /v1/events, SESSION_HOST=restate (whole command)', wholeCluster.p50, wholeCluster.p99],
        ['of which a Restate round trip (GET /api/sessions/:id: ingress → endpoint → answer, no write)', restateRead.p50, restateRead.p99],
        ['of which the Redis write of one activity item (XADD by script + read back by the tail)', redisWrite.p50, redisWrite.p99],
      ],
    );
    return { markdown, breakdown };
  } finally {
    await Promise.all(clusters.map((cluster) => cluster.stop()));
    await Promise.all(singles.map((server) => server.stop()));
    await redis.stop();
  }
}
