import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { round, table } from '../lib/stats.js';

const run = promisify(execFile);

export interface JournalApplyOptions {
  /** Activity log sizes, in items, one row each, with the 1,000 active sessions alone in the file. */
  sizes: number[];
  /** Sessions held in the file (the 1,000 active among them) for one more row, at the smallest size. */
  held: number;
  /** Applies timed at each size. */
  batches: number;
}

interface Measured {
  apply_ms: number;
  list_ms: number;
}

/**
 * The SQLite store's journal apply (2,000 rows: 1,000 sessions saved, 1,000 items) as the activity
 * log grows to its default retention of a million items, and a session's newest items read at each
 * size (bench/apply-worker.ts), and the same apply with many sessions held in the file. An apply
 * holds the event loop while it runs, so its time is what the durable store's p99 carries; it
 * should not grow with the log nor with the sessions held
 * (docs/decisions/0011-group-commit-and-the-journal.md).
 */
export async function journalApplySuite(
  options: JournalApplyOptions,
): Promise<{ markdown: string; growth: number; heldGrowth: number }> {
  const rows: (Measured & { items: number; held: number })[] = [];
  const cases = [
    ...options.sizes.map((items) => ({ items, held: 1_000 })),
    { items: options.sizes[0]!, held: options.held },
  ];
  for (const { items, held } of cases) {
    const { stdout } = await run(
      process.execPath,
      ['bench/apply-worker.ts', String(items), String(options.batches), String(held)],
      { maxBuffer: 1024 * 1024 },
    );
    rows.push({ items, held, ...(JSON.parse(stdout.trim().split('\n').at(-1)!) as Measured) });
  }
  const markdown = table(
    [
      'activity items held',
      'sessions held',
      'apply of 2,000 journal rows (ms, median)',
      "a session's newest 50 items (ms, median)",
    ],
    rows.map((row) => [
      row.items.toLocaleString('en-US'),
      row.held.toLocaleString('en-US'),
      round(row.apply_ms, 1),
      round(row.list_ms, 2),
    ]),
  );
  const bySize = rows.slice(0, options.sizes.length);
  return {
    markdown,
    growth: bySize.at(-1)!.apply_ms / bySize[0]!.apply_ms,
    heldGrowth: rows.at(-1)!.apply_ms / rows[0]!.apply_ms,
  };
}
