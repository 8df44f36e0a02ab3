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
import { SESSION_OBJECT } from '../../src/cluster/session-object.js';

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
  const child = spawn(
    ...launched(onServerCores, [process.execPath, '--import', 'tsx', 'bench/servers/restate-ceiling.ts']),
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
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
    const [row] = await query(
      `SELECT count(*) AS n FROM sys_invocation WHERE status IN ('pending', 'ready', 'running', 'backing-off', 'suspended')`,
    );
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
  for (const run of runs)
    for (const [cause, times] of Object.entries(run.failures ?? {}))
      causes.set(cause, (causes.get(cause) ?? 0) + times);
  return total === 0 || causes.size === 0
    ? String(total)
    : `${total} (${[...causes].map(([cause, times]) => `${times}× ${cause}`).join('; ')})`;
}

const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' / ');

type Target =
  | 'call ceiling'
  | 'one-way ceiling'
  | 'one-way, + one ctx.run'
  | 'one-way, + two state writes'
  | 'ingestion'
  | 'ingestion, bursts'
  | 'bursts at half the ceiling'
  | 'call ceiling at that rate'
  | 'trigger evaluate'
  | 'session read';

/** In the bursts, this many of the connections' events are in flight for each session at once (a field SDK sends a screen's events without waiting). */
const BURST = 5;

/**
 * Journal entries per SDK event, as Restate's own tables count them: a cluster of one process that
 * keeps each completed invocation's journal (RESTATE_JOURNAL_RETENTION_SECONDS), taking `events`
 * events spread over every session, then as bursts; each load's entries and invocations are what it
 * added to `sys_journal` and `sys_invocation`.
 */
async function journalPerEvent(redisUrl: string, options: ClusterBenchOptions, events: number): Promise<string> {
  const cluster = await startLocalCluster({
    redisUrl,
    processes: 1,
    built: true,
    launch: onServerCores,
    env: { RESTATE_JOURNAL_RETENTION_SECONDS: '600' },
    ...(CPU_SETS ? { restatePartitions: CPU_SETS.serverCores } : {}),
  });
  try {
    const query = (sql: string) => cluster.restate.query<{ n: number }>(sql);
    const count = async (sql: string) => Number((await query(sql))[0]?.n ?? 0);
    const ingest = `target_service_name = '${SESSION_OBJECT}' AND target_handler_name = 'ingest'`;
    const totals = async () => ({
      invocations: await count(`SELECT count(*) AS n FROM sys_invocation WHERE ${ingest}`),
      entries: await count(
        `SELECT count(*) AS n FROM sys_journal j JOIN sys_invocation i ON j.id = i.id WHERE i.${ingest.replace(' AND ', ' AND i.')}`,
      ),
    });
    const front = `http://127.0.0.1:${cluster.processes[0]!.port}`;
    const rows: (string | number)[][] = [];
    const loads: [string, number][] = [
      [`spread (${options.sessions.toLocaleString('en')} sessions)`, options.sessions],
      [`bursts (${BURST} in flight per session)`, Math.max(1, Math.round(options.connections / BURST))],
    ];
    for (const [name, sessions] of loads) {
      const before = await totals();
      const run = await runLoad(
        {
          url: front,
          method: 'POST',
          path: '/v1/events',
          connections: options.connections,
          sessions,
          body: 'event',
          amount: events,
        },
        GENERATOR,
      );
      await drained(query);
      const after = await totals();
      const taken = run.requests - run.errors - run.non2xx;
      const invocations = after.invocations - before.invocations;
      const entries = after.entries - before.entries;
      rows.push([
        name,
        taken,
        invocations,
        round(taken / Math.max(1, invocations), 2),
        entries,
        round(entries / Math.max(1, taken), 2),
      ]);
    }
    return table(
      [
        'load (50 connections)',
        'events taken',
        'ingest invocations',
        'events per invocation',
        'journal entries',
        'entries per event (target ≤ 2 under load)',
      ],
      rows,
    );
  } finally {
    await cluster.stop();
  }
}

/**
 * Cluster mode against Restate's own ceiling on the same server: a one-step virtual object (one
 * state read, one write) called request-response and sent one-way as fast as the generator can,
 * then SDK events through the service (sent one-way, docs/explanation/cluster.md), a call that answers
 * with the session's decision (trigger evaluation) and a read, for each process count. Each
 * cluster starts its own Redis-backed processes and Restate server on free loopback ports and is
 * stopped before the next; rounds are interleaved within a cluster.
 */
export async function clusterSuite(
  options: ClusterBenchOptions,
): Promise<{ markdown: string; ratios: string; journal: string; load: string; placement: string }> {
  // Every server of the cluster on the servers' cores, as each suite's server is (bench/lib/cpu-sets.ts);
  // the runner, and so the cluster's round-robin proxies inside it, with the generator.
  const redis = await startRedis({ dir: mkdtempSync(join(tmpdir(), 'bench-redis-')), launch: onServerCores });
  const rows: (string | number)[][] = [];
  const ratioRows: (string | number)[][] = [];
  const loads: string[] = [`before: ${load()}`];
  let journal: string;
  try {
    journal = await journalPerEvent(redis.url, options, 2_000);
    for (const processes of options.processCounts) {
      // One Restate partition per core the cluster is given (docs/explanation/cluster.md, "Partitions").
      const cluster = await startLocalCluster({
        redisUrl: redis.url,
        processes,
        built: true,
        launch: onServerCores,
        ...(CPU_SETS ? { restatePartitions: CPU_SETS.serverCores } : {}),
      });
      const ceiling = await startCeiling();
      try {
        await cluster.restate.register(`http://127.0.0.1:${ceiling.port}/`);
        const ingress = cluster.restate.ingressUrl.replace(/\/$/, '');
        // One process is measured without the proxy; more are reached through it, as behind a load balancer.
        const front = processes === 1 ? `http://127.0.0.1:${cluster.processes[0]!.port}` : cluster.url;
        const common = { connections: options.connections, sessions: options.sessions, body: 'event' as const };
        const jobs: Record<Target, Omit<LoadJob, 'durationSeconds'>> = {
          'call ceiling': { ...common, url: ingress, method: 'POST', path: `/${CEILING_OBJECT}/{session}/step` },
          'one-way ceiling': {
            ...common,
            url: ingress,
            method: 'POST',
            path: `/${CEILING_OBJECT}/{session}/step/send`,
          },
          'one-way, + one ctx.run': {
            ...common,
            url: ingress,
            method: 'POST',
            path: `/${CEILING_OBJECT}/{session}/stepAndRun/send`,
          },
          'one-way, + two state writes': {
            ...common,
            url: ingress,
            method: 'POST',
            path: `/${CEILING_OBJECT}/{session}/stepAndTwoWrites/send`,
          },
          ingestion: { ...common, url: front, method: 'POST', path: '/v1/events' },
          'ingestion, bursts': {
            ...common,
            sessions: Math.max(1, Math.round(options.connections / BURST)),
            url: front,
            method: 'POST',
            path: '/v1/events',
          },
          // Its rate is set each round: half the one-way ceiling's sustained rate, as just measured.
          'bursts at half the ceiling': {
            ...common,
            sessions: Math.max(1, Math.round(options.connections / BURST)),
            url: front,
            method: 'POST',
            path: '/v1/events',
          },
          // Restate's own answered step at the same rate: the least an answered event can take there.
          'call ceiling at that rate': {
            ...common,
            url: ingress,
            method: 'POST',
            path: `/${CEILING_OBJECT}/{session}/step`,
          },
          'trigger evaluate': {
            ...common,
            url: front,
            method: 'POST',
            path: '/v1/assistant/trigger/evaluate',
            body: 'trigger',
          },
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
        const sustained = (run: LoadResult, drain: number) =>
          (run.requestsPerSecond * options.durationSeconds) / (options.durationSeconds + drain);
        for (let round_ = 0; round_ < options.rounds; round_ += 1) {
          for (const target of targets) {
            const job = { ...jobs[target], durationSeconds: options.durationSeconds };
            if (target === 'bursts at half the ceiling' || target === 'call ceiling at that rate')
              job.overallRate = Math.max(
                1,
                Math.round(
                  sustained(results.get('one-way ceiling')!.at(-1)!, drains.get('one-way ceiling')!.at(-1)!) / 2,
                ),
              );
            results.get(target)!.push(await runLoad(job, GENERATOR));
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
            // What was taken per second of the run and the backlog's run after it together: the rate Restate keeps up with.
            sustained: round(median(runs.map((run, index) => sustained(run, drains.get(target)![index]!)))),
          };
        };
        for (const target of targets) {
          const measured = of(target);
          rows.push([
            processes,
            target,
            measured.rate,
            measured.sustained,
            measured.p50,
            measured.p99,
            measured.drain,
            measured.failed,
          ]);
        }
        const call = of('call ceiling');
        const oneWay = of('one-way ceiling');
        const ingestion = of('ingestion');
        const bursts = of('ingestion, bursts');
        ratioRows.push([
          processes,
          ratio(ingestion.sustained, oneWay.sustained),
          ratio(bursts.sustained, oneWay.sustained),
          of('bursts at half the ceiling').p50,
          of('call ceiling at that rate').p50,
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
    markdown: table(
      [
        'service processes',
        'target',
        'answered per second (median)',
        'sustained per second',
        'p50 ms',
        'p99 ms',
        'backlog run after, s',
        'failed requests',
      ],
      rows,
    ),
    journal,
    ratios: table(
      [
        'service processes',
        'ingestion ÷ one-way ceiling, sustained',
        `bursts (${BURST} in flight per session) ÷ one-way ceiling, sustained (target ≥ 0.8)`,
        'bursts p50 ms at half the ceiling (target ≤ 15)',
        "Restate's call p50 ms at that rate",
        'trigger p50 ÷ call ceiling p50 (target ≤ 2)',
        'read p50 ÷ call ceiling p50 (target ≤ 2)',
      ],
      ratioRows,
    ),
    load: loads.join('; '),
    placement: CPU_SETS
      ? `Pinned: redis-server, the Restate server, every service process and the ceiling's endpoint on CPU ${CPU_SETS.server}; ` +
        `the load generator (autocannon, for every target), this runner and the cluster's round-robin proxies ` +
        `(they run inside it) on CPU ${CPU_SETS.load}.`
      : 'Unpinned: the cluster and the load generator share every core.',
  };
}
