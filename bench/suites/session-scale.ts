import { runLoad, rssBytes, sleep } from '../lib/processes.js';
import { ratio, round, table } from '../lib/stats.js';
import { startService } from '../lib/targets.js';

export interface SessionScaleOptions {
  counts: number[];
  durationSeconds: number;
  connections: number;
}

export interface SessionScaleRow {
  sessions: number;
  rps: number;
  p99: number;
  rssMiB: number;
  bytesPerSession: number;
}

/**
 * For each session count: a fresh service, a warm-up on one session (baseline RSS), then one
 * event for each of N sessions, a timed run spread over all N sessions, and RSS again.
 */
export async function sessionScaleSuite(options: SessionScaleOptions): Promise<{ markdown: string; rows: SessionScaleRow[] }> {
  const rows: SessionScaleRow[] = [];
  for (const sessions of options.counts) {
    const server = await startService({ LOG_LEVEL: 'warn', MAX_SESSIONS: String(Math.max(100_000, sessions)) });
    try {
      const pid = server.child.pid!;
      const base = { url: server.url, method: 'POST' as const, path: '/v1/events', connections: options.connections, body: 'event' as const };
      await runLoad({ ...base, sessions: 1, amount: 5_000 });
      await sleep(500);
      const rssBefore = rssBytes(pid);
      await runLoad({ ...base, sessions, sequential: true, amount: sessions });
      // Read after the timed run: by then the collector has run over the new sessions, so RSS
      // reflects what they hold rather than garbage from creating them.
      const load = await runLoad({ ...base, sessions, durationSeconds: options.durationSeconds });
      await sleep(500);
      const rssAfter = rssBytes(pid);
      rows.push({
        sessions,
        rps: load.requestsPerSecond,
        p99: load.latencyP99,
        rssMiB: rssAfter / 2 ** 20,
        bytesPerSession: (rssAfter - rssBefore) / sessions,
      });
    } finally {
      await server.stop();
    }
  }
  const first = rows[0]!;
  const markdown = table(
    ['live sessions', 'req/s', 'p99 ms', 'vs first row', 'RSS MiB', 'RSS per session (bytes)'],
    rows.map((r) => [r.sessions.toLocaleString('en-US'), round(r.rps), r.p99, ratio(r.rps, first.rps), round(r.rssMiB, 1), round(r.bytesPerSession)]),
  );
  return { markdown, rows };
}
