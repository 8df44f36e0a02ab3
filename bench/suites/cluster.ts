import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { launched } from '../../scripts/cluster/launch.js';
import { startLocalCluster } from '../../scripts/cluster/local-cluster.js';
import { startRedis } from '../../scripts/cluster/redis-server.js';
import type { LoadJob, LoadResult } from '../load-worker.js';
import { CPU_SETS, onServerCores } from '../lib/cpu-sets.js';
import { runLoad } from '../lib/processes.js';
import { median, ratio, round, table } from '../lib/stats.js';
import { CEILING_OBJECT } from '../lib/ceiling-object.js';

export interface ClusterBenchOptions {
  rounds: number;
  warmupSeconds: number;
  durationSeconds: number;
  connections: number;
  sessions: number;
  /** Service processes per cluster measured, one cluster (with its own Restate server) at a time. */
  processCounts: number[];
}

/** The ceiling object's endpoint, in a process of its own as a service process's endpoint is. */
export async function startCeiling(): Promise<{ port: number; pid: number; stop(): Promise<void> }> {
  const child = spawn(...launched(onServerCores, [process.execPath, '--import', 'tsx', 'bench/servers/restate-ceiling.ts']), { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const match = /^port (\d+)$/.exec(line);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`ceiling endpoint exited (${code})`)));
  });
  return {
    port,
    pid: child.pid!,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * Waits until Restate has run every invocation it took (a one-way run leaves a queue behind it),
 * so the next run does not share the machine with the last one's backlog; answers how long that took.
 */
export async function drained(query: (sql: string) => Promise<{ n: number }[]>): Promise<number> {
  const started = performance.now();
  const deadline = started + 120_000;
  for (;;) {
    const [row] = await query(`SELECT count(*) AS n FROM sys_invocation WHERE status IN ('pending', 'ready', 'running', 'backing-off', 'suspended')`);
    if (Number(row?.n ?? 0) === 0 || performance.now() > deadline) return (performance.now() - started) / 1000;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** wrk cannot send to a path per session (the ceilings'): one generator for every target, so their ratios compare like with like. */
const GENERATOR = 'autocannon';

/** How many requests failed over the runs, and why (a timeout, a connection error, a status and its detail). */
function failedCell(runs: LoadResult[]): string {
  const total = runs.reduce((sum, run) => sum + run.errors + run.non2xx, 0);
  const causes = new Map<string, number>();
  for (const run of runs) for (const [cause, times] of Object.entries(run.failures ?? {})) causes.set(cause, (causes.get(cause) ?? 0) + times);
  return total === 0 || causes.size === 0 ? String(total) : `${total} (${[...causes].map(([cause, times]) => `${times}× ${cause}`).join('; ')})`;
}

const load = () => loadavg().map((value) => value.toFixed(2)).join(' / ');

type Target = 'call ceiling' | 'one-way ceiling' | 'one-way, + one ctx.run' | 'one-way, + two state writes' | 'ingestion' | 'trigger evaluate' | 'session read';

/**
 * Cluster mode against Restate's own ceiling on the same server: a one-step virtual object (one
 * state read, one write) called request-response and sent one-way as fast as the generator can,
 * then SDK events through the service (sent one-way, docs/cluster-mode.md), a call that answers
 * with the session's decision (trigger evaluation) and a read, for each process count. Each
 * cluster starts its own Redis-backed processes and Restate server on free loopback ports and is
 * stopped before the next; rounds are interleaved within a cluster.
 */
export async function clusterSuite(options: ClusterBenchOptions): Promise<{ markdown: string; ratios: string; load: string; placement: string }> {
  // Every server of the cluster on the servers' cores, as each suite's server is (bench/lib/cpu-sets.ts);
  // the runner, and so the cluster's round-robin proxies inside it, with the generator.
  const redis = await startRedis({ dir: mkdtempSync(join(tmpdir(), 'bench-redis-')), launch: onServerCores });
  const rows: (string | number)[][] = [];
  const ratioRows: (string | number)[][] = [];
  const loads: string[] = [`before: ${load()}`];
  try {
    for (const processes of options.processCounts) {
      // One Restate partition per core the cluster is given (docs/cluster.md, "Partitions").
      const cluster = await startLocalCluster({ redisUrl: redis.url, processes, built: true, launch: onServerCores, ...(CPU_SETS ? { restatePartitions: CPU_SETS.serverCores } : {}) });
      const ceiling = await startCeiling();
      try {
        await cluster.restate.register(`http://127.0.0.1:${ceiling.port}/`);
        const ingress = cluster.restate.ingressUrl.replace(/\/$/, '');
        // One process is measured without the proxy; more are reached through it, as behind a load balancer.
        const front = processes === 1 ? `http://127.0.0.1:${cluster.processes[0]!.port}` : cluster.url;
        const common = { connections: options.connections, sessions: options.sessions, body: 'event' as const };
        const jobs: Record<Target, Omit<LoadJob, 'durationSeconds'>> = {
          'call ceiling': { ...common, url: ingress, method: 'POST', path: `/${CEILING_OBJECT}/{session}/step` },
          'one-way ceiling': { ...common, url: ingress, method: 'POST', path: `/${CEILING_OBJECT}/{session}/step/send` },
          'one-way, + one ctx.run': { ...common, url: ingress, method: 'POST', path: `/${CEILING_OBJECT}/{session}/stepAndRun/send` },
          'one-way, + two state writes': { ...common, url: ingress, method: 'POST', path: `/${CEILING_OBJECT}/{session}/stepAndTwoWrites/send` },
          ingestion: { ...common, url: front, method: 'POST', path: '/v1/events' },
          'trigger evaluate': { ...common, url: front, method: 'POST', path: '/v1/assistant/trigger/evaluate', body: 'trigger' },
          'session read': { ...common, url: front, method: 'GET', path: '/api/sessions/{session}' },
        };
        const targets = Object.keys(jobs) as Target[];
        const query = (sql: string) => cluster.restate.query<{ n: number }>(sql);
        // Every session exists before anything reads it: one event each, in order.
        await runLoad({ ...jobs.ingestion, amount: options.sessions, sequential: true }, GENERATOR);
        for (const target of targets) {
          await runLoad({ ...jobs[target], durationSeconds: options.warmupSeconds }, GENERATOR);
          await drained(query);
        }
        const results = new Map<Target, LoadResult[]>(targets.map((target) => [target, []]));
        const drains = new Map<Target, number[]>(targets.map((target) => [target, []]));
        for (let round_ = 0; round_ < options.rounds; round_ += 1) {
          for (const target of targets) {
            results.get(target)!.push(await runLoad({ ...jobs[target], durationSeconds: options.durationSeconds }, GENERATOR));
            drains.get(target)!.push(await drained(query));
          }
        }
        loads.push(`after ${processes} process(es): ${load()}`);
        const of = (target: Target) => {
          const runs = results.get(target)!;
          return {
            rate: round(median(runs.map((run) => run.requestsPerSecond))),
            p50: round(median(runs.map((run) => run.latencyP50)), 1),
            p99: round(median(runs.map((run) => run.latencyP99)), 1),
            failed: failedCell(runs),
            // Taken but not yet run when the generator stopped: a one-way rate Restate cannot keep up shows here.
            drain: round(median(drains.get(target)!), 1),
          };
        };
        for (const target of targets) {
          const measured = of(target);
          rows.push([processes, target, measured.rate, measured.p50, measured.p99, measured.drain, measured.failed]);
        }
        const call = of('call ceiling');
        const oneWay = of('one-way ceiling');
        const ingestion = of('ingestion');
        ratioRows.push([
          processes,
          ratio(ingestion.rate, oneWay.rate),
          ingestion.p50,
          ratio(of('trigger evaluate').p50, call.p50),
          ratio(of('session read').p50, call.p50),
        ]);
      } finally {
        await ceiling.stop();
        await cluster.stop();
      }
    }
  } finally {
    await redis.stop();
  }
  return {
    markdown: table(['service processes', 'target', 'per second (median)', 'p50 ms', 'p99 ms', 'backlog run after, s', 'failed requests'], rows),
    ratios: table(['service processes', 'ingestion ÷ one-way ceiling (target ≥ 0.8)', 'ingestion p50 ms (target ≤ 15)', 'trigger p50 ÷ call ceiling p50 (target ≤ 2)', 'read p50 ÷ call ceiling p50 (target ≤ 2)'], ratioRows),
    load: loads.join('; '),
    placement: CPU_SETS
      ? `Pinned: redis-server, the Restate server, every service process and the ceiling's endpoint on CPU ${CPU_SETS.server}; the load generator (autocannon, for every target), this runner and the cluster's round-robin proxies (they run inside it) on CPU ${CPU_SETS.load}.`
      : 'Unpinned: the cluster and the load generator share every core.',
  };
}
