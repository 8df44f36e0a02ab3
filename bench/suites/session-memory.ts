import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { SERVICE_NODE_FLAGS } from '../lib/node-flags.js';
import { table } from '../lib/stats.js';

const run = promisify(execFile);

export type SessionShape = 'one-event' | 'pan' | 'field' | 'stuffed' | 'nested' | 'wide' | 'strings' | 'shapes';

const SHAPES: { shape: SessionShape; name: string }[] = [
  { shape: 'one-event', name: 'one `component_input` (a flood of new sessions)' },
  { shape: 'pan', name: 'stuck on the PAN screen: a schema, two hints, a failure' },
  { shape: 'field', name: "a deployed SDK's start: 14 schemas, 12 typed fields" },
  { shape: 'stuffed', name: 'eight events with 30 KB unknown fields, 900-byte notes' },
  { shape: 'nested', name: 'one event of 15,000 empty arrays and objects (45 KB)' },
  { shape: 'wide', name: 'one event of an object with 4,000 keys (50 KB)' },
  { shape: 'strings', name: 'one event of 4,000 distinct five-letter strings and 1,500 boxed numbers (50 KB)' },
  { shape: 'shapes', name: 'one event of 3,000 objects, each with a key of its own (40 KB)' },
];

/**
 * The heap of a running one-event session: past MAX_SESSIONS the collector marks some 45,000 of
 * them on the main thread, and a smaller one keeps /health/live answering (docs/reference/limits.md,
 * Session count).
 */
export const ONE_EVENT_HEAP_TARGET_BYTES = 6_800;

interface Measured {
  heap_per_session: number;
  estimate_per_session: number;
  ratio: number;
}

/**
 * The memory budget's estimate of a running session against the heap it adds, measured after a
 * full collection (session-memory-worker.ts), for each shape of session on SQLite (the last two a
 * hostile client's, whose structure costs the heap far more than its JSON). Throws when
 * the estimate is below the heap for any shape: the budget would then let sessions past V8's heap
 * limit (src/actor-system/memory-budget.ts).
 */
export async function sessionMemorySuite(options: {
  sessions: number;
}): Promise<{ markdown: string; lowestRatio: number; oneEventHeap: number }> {
  const rows: string[][] = [];
  let lowestRatio = Number.POSITIVE_INFINITY;
  let oneEventHeap = Number.NaN;
  for (const { shape, name } of SHAPES) {
    const { stdout } = await run(
      process.execPath,
      [
        '--expose-gc',
        ...SERVICE_NODE_FLAGS,
        'bench/session-memory-worker.ts',
        shape,
        String(options.sessions),
        'sqlite',
      ],
      { maxBuffer: 1024 * 1024 },
    );
    const measured = JSON.parse(stdout.trim().split('\n').at(-1)!) as Measured;
    lowestRatio = Math.min(lowestRatio, measured.ratio);
    if (shape === 'one-event') oneEventHeap = measured.heap_per_session;
    rows.push([
      name,
      measured.heap_per_session.toLocaleString('en-US'),
      measured.estimate_per_session.toLocaleString('en-US'),
      measured.ratio.toFixed(2),
    ]);
  }
  if (lowestRatio < 1)
    throw new Error(
      `the memory budget counts a session below the heap it takes (estimate/heap ${lowestRatio.toFixed(2)}): raise SESSION_OVERHEAD_BYTES or HELD_BYTES_FACTOR`,
    );
  return {
    markdown: table(['session shape', 'heap per session, B', 'estimate per session, B', 'estimate / heap'], rows),
    lowestRatio,
    oneEventHeap,
  };
}
