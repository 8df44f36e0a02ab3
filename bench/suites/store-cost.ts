import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { round, table } from '../lib/stats.js';

const run = promisify(execFile);

export interface StoreCostOptions {
  /** Blocks of events each checkout's store takes, in turns. */
  rounds: number;
  /** Events in a block. */
  block: number;
}

interface Measured {
  checkout: string;
  cpu_us_per_event: number;
  bytes_per_event: number;
  events: number;
  items_only_applies: { count: number; median_ms: number; max_ms: number };
  session_applies: { count: number; median_ms: number; max_ms: number };
}

/**
 * The SQLite store alone, in process, fed the ingestion bench's sessions (bench/store-cost-worker.ts):
 * its main-thread CPU and the bytes it writes per event, and the pauses of its journal applies, for
 * this build and each of BENCH_AGAINST's (built checkouts, comma-separated) in turns on one core.
 * Without the HTTP front, a store's figures move by a few percent between runs rather than the
 * tens of percent a shared machine gives a whole server (docs/reference/benchmark-method.md).
 */
export async function storeCostSuite(options: StoreCostOptions): Promise<{ markdown: string }> {
  const against = (process.env.BENCH_AGAINST ?? '').split(',').filter((dir) => dir !== '');
  const { stdout } = await run(
    'taskset',
    [
      '-c',
      '0',
      process.execPath,
      'bench/store-cost-worker.ts',
      ['.', ...against].join(','),
      String(options.rounds),
      String(options.block),
    ],
    { maxBuffer: 1024 * 1024 },
  );
  const measured = JSON.parse(stdout.trim().split('\n').at(-1)!) as Measured[];
  const base = measured[0]!;
  const applies = (kind: Measured['session_applies']) =>
    kind.count === 0 ? '-' : `${kind.count}: ${round(kind.median_ms, 1)} / ${round(kind.max_ms, 1)}`;
  return {
    markdown: table(
      [
        'build',
        'main-thread CPU µs/event',
        'vs this build',
        'bytes written/event',
        'applies of items alone: count, median / max ms',
        'applies with sessions: count, median / max ms',
      ],
      measured.map((each) => [
        each.checkout === '.' ? 'this build' : `\`${each.checkout}\``,
        round(each.cpu_us_per_event, 1),
        round(each.cpu_us_per_event / base.cpu_us_per_event, 2),
        round(each.bytes_per_event),
        applies(each.items_only_applies),
        applies(each.session_applies),
      ]),
    ),
  };
}
