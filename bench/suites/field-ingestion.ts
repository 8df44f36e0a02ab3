import type { InterleavedOptions } from '../lib/interleaved.js';
import { measureInterleaved } from '../lib/interleaved.js';
import { seedFieldSessions } from '../lib/session-setup.js';
import { median, ratio, round, table } from '../lib/stats.js';
import { startBareExpress, startService } from '../lib/targets.js';

/**
 * POST /v1/events as in the ingestion suite, but over sessions holding a deployed SDK's state
 * (14 screen schemas, 12 typed fields: about 17 KB) rather than a bench session's 1.6 KB. What a
 * durable event costs grows with what the store rewrites of its session, so this is the size the
 * field sees. Interleaved with bare express, which keeps no state and is the same in both suites.
 */
export async function fieldIngestionSuite(
  options: InterleavedOptions,
): Promise<{ markdown: string; memoryOverExpress: number; sqliteOverExpress: number }> {
  const seed = (server: { url: string }) => seedFieldSessions(server.url, options.sessions);
  const targets = [
    {
      name: 'service, field sessions (LOG_LEVEL=warn)',
      start: () => startService({ LOG_LEVEL: 'warn' }),
      prepare: seed,
    },
    {
      name: 'service, field sessions, STORE=sqlite (LOG_LEVEL=warn)',
      start: () => startService({ LOG_LEVEL: 'warn', STORE: 'sqlite' }),
      prepare: seed,
    },
    { name: 'bare express 5', start: () => startBareExpress() },
  ];
  const results = await measureInterleaved(targets, options);
  const summary = targets.map((target) => {
    const runs = results.get(target.name)!;
    const failed = runs.reduce((total, run) => total + run.errors + run.non2xx, 0);
    if (failed > 0) throw new Error(`${target.name}: ${failed} failed requests`);
    return {
      name: target.name,
      rps: median(runs.map((r) => r.requestsPerSecond)),
      p99: median(runs.map((r) => r.latencyP99)),
      cpu: median(runs.map((r) => r.cpuMicrosPerRequest)),
    };
  });
  const [memory, sqlite, express] = summary as [(typeof summary)[0], (typeof summary)[0], (typeof summary)[0]];
  return {
    markdown: table(
      ['target', 'req/s (median)', 'p99 ms', 'server CPU µs/request', 'vs express'],
      summary.map((s) => [s.name, round(s.rps), s.p99, round(s.cpu), ratio(s.rps, express.rps)]),
    ),
    memoryOverExpress: memory.rps / express.rps,
    sqliteOverExpress: sqlite.rps / express.rps,
  };
}
