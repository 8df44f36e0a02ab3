import { HELD_MEMORY_BUDGET_MB, expectHeld } from '../lib/held-sessions.js';
import { collectGarbage } from '../lib/inspector.js';
import type { LoadJob, LoadResult } from '../load-worker.js';
import type { ServerProcess } from '../lib/processes.js';
import { freePort, runLoad, rssBytes, sleep } from '../lib/processes.js';
import { median, ratio, round, table } from '../lib/stats.js';
import { startService } from '../lib/targets.js';

export interface SessionScaleOptions {
  counts: number[];
  durationSeconds: number;
  rounds: number;
  connections: number;
  /** Sessions the timed run spreads its events over: users mid-flow, while the rest sit idle. */
  activeSessions: number;
  /** SESSION_HIBERNATE_SECONDS for the service: how long a session must be untouched to count as idle. */
  hibernateSeconds: number;
  store: 'memory' | 'sqlite';
}

export interface SessionScaleRow {
  sessions: number;
  rps: number;
  p99: number;
  /** Events spread over every session: nearly each one wakes a hibernated session. */
  wakeRps: number;
  rssMiB: number;
  bytesPerIdleSession: number;
}

/**
 * One service per session count, all kept running. Each gets a warm-up on one session (baseline
 * RSS), one event for each of its N sessions, then every session is left untouched until it
 * hibernates (RSS again: the cost of an idle session). RSS is read after a full collection
 * requested over the inspector protocol, so it counts what the process keeps, not garbage awaiting
 * the next collection. Then timed runs go round the services, interleaved so drift on a shared
 * machine hits every row: events spread over the same number of active sessions whatever N (does
 * holding N sessions slow ingestion?), medians over the rounds; and one run with events spread over
 * all N (each one likely wakes an idle session).
 */
export async function sessionScaleSuite(
  options: SessionScaleOptions,
): Promise<{ markdown: string; rows: SessionScaleRow[] }> {
  const rows: Prepared[] = [];
  const starting = await Promise.allSettled(options.counts.map((sessions) => start(sessions, options)));
  try {
    const started = starting.map((outcome) => {
      if (outcome.status === 'rejected') throw outcome.reason;
      return outcome.value;
    });
    // Filled one after another; one wait for all of them to hibernate.
    for (const [index, sessions] of options.counts.entries()) rows.push(await fill(sessions, started[index]!, options));
    // Every session hibernates once untouched for the delay (plus a margin for the last ones).
    await sleep((options.hibernateSeconds + 2) * 1000);
    for (const row of rows) row.rssIdle = await row.settledRss();
    const active = (row: Prepared) => ({ ...row.load, sessions: Math.min(options.activeSessions, row.sessions) });
    for (const row of rows) await runLoad({ ...active(row), durationSeconds: 1 });
    for (let round = 0; round < options.rounds; round += 1) {
      for (const row of rows)
        row.runs.push(await runLoad({ ...active(row), durationSeconds: options.durationSeconds }));
    }
    for (const row of rows)
      row.wakeRps = (
        await runLoad({ ...row.load, sessions: row.sessions, durationSeconds: options.durationSeconds })
      ).requestsPerSecond;
  } finally {
    await Promise.all(
      starting.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value.server.stop() : Promise.resolve())),
    );
  }
  const results: SessionScaleRow[] = rows.map((row) => ({
    sessions: row.sessions,
    rps: median(row.runs.map((r) => r.requestsPerSecond)),
    p99: median(row.runs.map((r) => r.latencyP99)),
    wakeRps: row.wakeRps,
    rssMiB: row.rssIdle / 2 ** 20,
    bytesPerIdleSession: (row.rssIdle - row.rssBefore) / row.sessions,
  }));
  const first = results[0]!;
  const markdown = table(
    [
      'live sessions',
      `req/s over ${options.activeSessions.toLocaleString('en-US')} active`,
      'p99 ms',
      'vs first row',
      'req/s over all (waking idle ones)',
      'RSS MiB, all idle',
      'RSS per idle session (bytes)',
    ],
    results.map((r) => [
      r.sessions.toLocaleString('en-US'),
      round(r.rps),
      r.p99,
      ratio(r.rps, first.rps),
      round(r.wakeRps),
      round(r.rssMiB, 1),
      round(r.bytesPerIdleSession),
    ]),
  );
  return { markdown, rows: results };
}

interface Prepared {
  sessions: number;
  server: ServerProcess;
  load: Omit<LoadJob, 'sessions'>;
  settledRss: () => Promise<number>;
  rssBefore: number;
  rssIdle: number;
  runs: LoadResult[];
  wakeRps: number;
}

async function start(
  sessions: number,
  options: SessionScaleOptions,
): Promise<{ server: ServerProcess; inspector: string }> {
  const inspector = `127.0.0.1:${await freePort()}`;
  const server = await startService(
    {
      LOG_LEVEL: 'warn',
      STORE: options.store,
      MAX_SESSIONS: String(Math.max(100_000, sessions)),
      MEMORY_BUDGET_MB: HELD_MEMORY_BUDGET_MB,
      SESSION_HIBERNATE_SECONDS: String(options.hibernateSeconds),
    },
    [`--inspect=${inspector}`],
  );
  return { server, inspector };
}

async function fill(
  sessions: number,
  { server, inspector }: { server: ServerProcess; inspector: string },
  options: SessionScaleOptions,
): Promise<Prepared> {
  const pid = server.child.pid!;
  const settledRss = async () => {
    await collectGarbage(inspector);
    await sleep(200);
    return rssBytes(pid);
  };
  const load = {
    url: server.url,
    method: 'POST' as const,
    path: '/v1/events',
    connections: options.connections,
    body: 'event' as const,
  };
  await runLoad({ ...load, sessions: 1, amount: 1_500 });
  const rssBefore = await settledRss();
  await runLoad({ ...load, sessions, sequential: true, amount: sessions });
  await expectHeld(server, sessions);
  return { sessions, server, load, settledRss, rssBefore, rssIdle: Number.NaN, runs: [], wakeRps: 0 };
}
