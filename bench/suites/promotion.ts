import { runLoad } from '../lib/processes.js';
import { median, round, table } from '../lib/stats.js';
import { startService } from '../lib/targets.js';

/**
 * Bytes the young generation's collections promote per request under the ingestion load, above
 * which a run fails. Set from docs/decisions/0014-nothing-outlives-the-young-generation.md: while the server kept the response
 * under way in a Map, nearly every request was promoted whole, about 5,000 B a request with
 * scavenges of 12-15 ms; since, 300-600 B. Promotion is what makes the scavenges long (each copies
 * what survives) and fills the old generation, so it is the figure that shows that kind of leak
 * before the p99 does.
 */
export const PROMOTED_BYTES_GUARD = 2_000;

/**
 * What the service keeps is promoted while it fills: 1,000 sessions' state and the activity log's
 * newest items (ACTIVITY_RETENTION_ITEMS) take a few seconds of this load to reach their size, and
 * after a 1 s warm-up a run measured 5,962 B a request. So the load runs this long before the
 * measured part, whatever the run's own warm-up.
 */
const MIN_WARMUP_SECONDS = 3;

interface Scavenge {
  pauseMs: number;
  promotedBytes: number;
}

/** One young-generation collection from a `--trace-gc-nvp` line; undefined for any other line. */
function parseScavenge(line: string): Scavenge | undefined {
  if (!line.includes(' gc=s ')) return undefined;
  const pause = /\bpause=([\d.]+)/.exec(line);
  const promoted = /\bpromoted=(\d+)/.exec(line);
  return pause && promoted ? { pauseMs: Number(pause[1]), promotedBytes: Number(promoted[1]) } : undefined;
}

export interface PromotionOptions {
  warmupSeconds: number;
  durationSeconds: number;
  connections: number;
  sessions: number;
}

/**
 * POST /v1/events load on the service started with V8's `--trace-gc-nvp`, on each store: the
 * young-generation collections of the measured run, what they promoted per request and how long
 * they paused the process. Throws when the memory store promotes more than the guard.
 */
export async function promotionSuite(options: PromotionOptions): Promise<{ markdown: string; guard: string }> {
  const rows: (string | number)[][] = [];
  let memoryBytesPerRequest = 0;
  for (const store of ['memory', 'sqlite'] as const) {
    const scavenges: Scavenge[] = [];
    let measuring = false;
    const server = await startService({ LOG_LEVEL: 'warn', STORE: store }, ['--trace-gc-nvp'], (line) => {
      const scavenge = measuring ? parseScavenge(line) : undefined;
      if (scavenge) scavenges.push(scavenge);
    });
    try {
      const job = {
        url: server.url,
        method: 'POST' as const,
        path: '/v1/events',
        connections: options.connections,
        sessions: options.sessions,
        body: 'event' as const,
      };
      await runLoad({ ...job, durationSeconds: Math.max(options.warmupSeconds, MIN_WARMUP_SECONDS) });
      measuring = true;
      const load = await runLoad({ ...job, durationSeconds: options.durationSeconds });
      measuring = false;
      if (scavenges.length === 0)
        throw new Error(`STORE=${store}: no scavenge seen in ${options.durationSeconds} s of load`);
      const promoted = scavenges.reduce((total, scavenge) => total + scavenge.promotedBytes, 0);
      const bytesPerRequest = promoted / load.requests;
      if (store === 'memory') memoryBytesPerRequest = bytesPerRequest;
      const pauses = scavenges.map((scavenge) => scavenge.pauseMs);
      rows.push([
        `STORE=${store}`,
        load.requests,
        scavenges.length,
        round(bytesPerRequest).toLocaleString('en-US'),
        round(median(pauses), 1),
        round(Math.max(...pauses), 1),
        load.latencyP99,
      ]);
    } finally {
      await server.stop();
    }
  }
  const guard = `Regression guard: ${round(memoryBytesPerRequest).toLocaleString('en-US')} B promoted per request on STORE=memory (fails above ${PROMOTED_BYTES_GUARD.toLocaleString('en-US')} B)`;
  if (memoryBytesPerRequest > PROMOTED_BYTES_GUARD)
    throw new Error(
      `${guard}: requests outlive the young generation (bench/suites/promotion.ts, docs/decisions/0014-nothing-outlives-the-young-generation.md)`,
    );
  return {
    markdown: table(
      [
        'store',
        'requests',
        'scavenges',
        'bytes promoted per request',
        'median pause ms',
        'longest pause ms',
        'request p99 ms',
      ],
      rows,
    ),
    guard,
  };
}
