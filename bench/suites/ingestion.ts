import type { InterleavedOptions, InterleavedTarget } from '../lib/interleaved.js';
import { HELD_MEMORY_BUDGET_MB, expectHeld } from '../lib/held-sessions.js';
import { measureInterleaved } from '../lib/interleaved.js';
import type { ServerProcess } from '../lib/processes.js';
import { runLoad } from '../lib/processes.js';
import { median, ratio, round, table } from '../lib/stats.js';
import {
  startBareExpress,
  startBareExpressSqlite,
  startBareNode,
  startService,
  startServiceHttpLayer,
} from '../lib/targets.js';

export interface IngestionOptions extends InterleavedOptions {
  /** Sessions the service holds in its "many sessions" rows: the load's active ones and the rest idle. */
  sessionsHeld: number;
}

/** SESSION_HIBERNATE_SECONDS of the services holding many sessions: short, so the rounds find the idle ones as a day leaves them. */
const HELD_HIBERNATE_SECONDS = 5;

/**
 * One event to each of `sessions` sessions, one after another: they stay held while the load
 * touches the first `options.sessions`. Measuring starts once all of them have hibernated, as
 * idle sessions are by then in the field; otherwise the first round would find them running
 * (SESSION_HIBERNATE_SECONDS defaults to a minute) and the later ones hibernated.
 */
const holdSessions = (sessions: number) => async (server: ServerProcess) => {
  await runLoad({
    url: server.url,
    method: 'POST',
    path: '/v1/events',
    connections: 50,
    body: 'event',
    sessions,
    sequential: true,
    amount: sessions,
  });
  const deadline = Date.now() + (HELD_HIBERNATE_SECONDS + 30) * 1000;
  for (;;) {
    const { hibernated } = await expectHeld(server, sessions);
    if (hibernated >= sessions) return;
    if (Date.now() > deadline)
      throw new Error(`${hibernated} of ${sessions} held sessions hibernated after ${HELD_HIBERNATE_SECONDS + 30} s`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
};

/**
 * POST /v1/events on the service vs a bare express app vs bare node:http: same body, same load
 * generator settings, interleaved round by round so drift on a shared machine hits all of them.
 * The service is measured with the load's 1,000 sessions alone and holding `sessionsHeld` (the
 * rest idle, as most of a day's sessions are), on both stores.
 * STORE=sqlite is also set beside bare express keeping each event in SQLite, the floor of any
 * durable ingest on this engine.
 */
export async function ingestionSuite(options: IngestionOptions): Promise<{
  markdown: string;
  serviceOverExpress: number;
  sqliteOverExpress: number;
  heldOverExpress: number;
  sqliteHeldOverExpress: number;
  sqliteOverMemory: number;
  sqliteOverBareSqlite: number;
  bareSqliteOverExpress: number;
  httpLayerOverExpress: number;
  /** p99 latencies in ms: the pinned target bounds the service's by twice express's. */
  p99: { memory: number; sqlite: number; express: number };
}> {
  const held = options.sessionsHeld.toLocaleString('en-US');
  const heldEnv = {
    LOG_LEVEL: 'warn',
    MAX_SESSIONS: String(options.sessionsHeld * 2),
    MEMORY_BUDGET_MB: HELD_MEMORY_BUDGET_MB,
    SESSION_HIBERNATE_SECONDS: String(HELD_HIBERNATE_SECONDS),
  };
  const targets: InterleavedTarget[] = [
    { name: 'service (LOG_LEVEL=warn)', start: () => startService({ LOG_LEVEL: 'warn' }) },
    {
      name: 'service, STORE=sqlite (LOG_LEVEL=warn)',
      start: () => startService({ LOG_LEVEL: 'warn', STORE: 'sqlite' }),
    },
    {
      name: `service holding ${held} sessions (LOG_LEVEL=warn)`,
      start: () => startService(heldEnv),
      prepare: holdSessions(options.sessionsHeld),
    },
    {
      name: `service, STORE=sqlite, holding ${held} sessions (LOG_LEVEL=warn)`,
      start: () => startService({ ...heldEnv, STORE: 'sqlite' }),
      prepare: holdSessions(options.sessionsHeld),
    },
    { name: 'service HTTP layer alone (session step skipped)', start: () => startServiceHttpLayer() },
    { name: 'bare express 5', start: () => startBareExpress() },
    { name: 'bare express 5 + SQLite (one row per event, group commit)', start: startBareExpressSqlite },
    { name: 'bare node:http', start: startBareNode },
  ];
  // BENCH_AGAINST=<built checkouts, comma-separated>: their services in the same interleaved, pinned
  // run, so a change is measured against what it replaces rather than across runs.
  const against = (process.env.BENCH_AGAINST ?? '').split(',').filter((dir) => dir !== '');
  targets.splice(
    2,
    0,
    ...against.flatMap((dir): InterleavedTarget[] => [
      {
        name: `service at ${dir} (LOG_LEVEL=warn)`,
        start: () => startService({ LOG_LEVEL: 'warn' }, [], undefined, dir),
      },
      {
        name: `service at ${dir}, STORE=sqlite (LOG_LEVEL=warn)`,
        start: () => startService({ LOG_LEVEL: 'warn', STORE: 'sqlite' }, [], undefined, dir),
      },
    ]),
  );
  const results = await measureInterleaved(targets, options);
  const summary = targets.map((target) => {
    const runs = results.get(target.name)!;
    return {
      name: target.name,
      rps: median(runs.map((r) => r.requestsPerSecond)),
      p50: median(runs.map((r) => r.latencyP50)),
      p99: median(runs.map((r) => r.latencyP99)),
      cpu: median(runs.map((r) => r.cpuMicrosPerRequest)),
      failures: runs.reduce((total, r) => total + r.errors + r.non2xx, 0),
    };
  });
  const express = summary.find((s) => s.name === 'bare express 5')!;
  const node = summary.find((s) => s.name === 'bare node:http')!;
  const markdown = table(
    [
      'target',
      'req/s (median)',
      'p50 ms',
      'p99 ms',
      'failed requests',
      'server CPU µs/request',
      'vs express',
      'vs node:http',
    ],
    summary.map((s) => [
      s.name,
      round(s.rps),
      round(s.p50, 1),
      round(s.p99, 1),
      s.failures,
      round(s.cpu),
      ratio(s.rps, express.rps),
      ratio(s.rps, node.rps),
    ]),
  );
  const memory = summary.find((s) => s.name === 'service (LOG_LEVEL=warn)')!;
  const sqlite = summary.find((s) => s.name === 'service, STORE=sqlite (LOG_LEVEL=warn)')!;
  const memoryHeld = summary.find((s) => s.name === `service holding ${held} sessions (LOG_LEVEL=warn)`)!;
  const sqliteHeld = summary.find(
    (s) => s.name === `service, STORE=sqlite, holding ${held} sessions (LOG_LEVEL=warn)`,
  )!;
  const httpLayer = summary.find((s) => s.name.startsWith('service HTTP layer'))!;
  const bareSqlite = summary.find((s) => s.name.startsWith('bare express 5 + SQLite'))!;
  return {
    markdown,
    serviceOverExpress: memory.rps / express.rps,
    sqliteOverExpress: sqlite.rps / express.rps,
    heldOverExpress: memoryHeld.rps / express.rps,
    sqliteHeldOverExpress: sqliteHeld.rps / express.rps,
    sqliteOverMemory: sqlite.rps / memory.rps,
    sqliteOverBareSqlite: sqlite.rps / bareSqlite.rps,
    bareSqliteOverExpress: bareSqlite.rps / express.rps,
    httpLayerOverExpress: httpLayer.rps / express.rps,
    p99: { memory: memory.p99, sqlite: sqlite.p99, express: express.p99 },
  };
}
