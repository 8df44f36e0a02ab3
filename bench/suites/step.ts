import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { SERVICE_NODE_FLAGS } from '../lib/node-flags.js';
import { median, round, table } from '../lib/stats.js';

const run = promisify(execFile);

/** One row: `sessions` held, the events spread over `active` of them (all unless given; the rest hibernated). */
export interface StepRow {
  sessions: number;
  active?: number;
  /** Each session first given a deployed SDK's 14 schemas and 12 typed fields (step-worker.ts `--field`). */
  field?: boolean;
}

export interface StepOptions {
  rows: StepRow[];
  /** Events per measured run. */
  count: number;
  rounds: number;
}

/**
 * Bytes allocated per ingested event at 1,000 sessions when the guard was last set (docs/decisions/0015-checkpoints-on-a-worker-and-sizes-from-the-redaction-pass.md:
 * 3,760-3,830 with the JSON sizes counted by the redaction pass; 4,675 before it,
 * when SDK events began to be applied by `ingestStep` directly; 23,000 through XState's
 * macrostep). Allocation hardly moves with the load on the machine (runs
 * agree within 1-2%), so unlike time it can fail a run: twice this is a regression, not noise.
 */
export const STEP_BYTES_BASELINE = 3_800;
const GUARD_SESSIONS = 1_000;

interface Measured {
  ns_per_event: number;
  bytes_per_event: number;
  heap_per_session: number;
}

async function measure(row: StepRow, count: number): Promise<Measured> {
  const args = [
    String(row.sessions),
    String(count),
    'memory',
    ...(row.active !== undefined ? [String(row.active)] : []),
    ...(row.field ? ['--field'] : []),
  ];
  const { stdout } = await run(
    process.execPath,
    ['--expose-gc', ...SERVICE_NODE_FLAGS, 'bench/step-worker.ts', ...args],
    { maxBuffer: 1024 * 1024 },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Measured;
}

const rowName = (row: StepRow): string =>
  row.field
    ? `${row.sessions.toLocaleString('en-US')} field sessions (14 schemas, 12 typed fields each)`
    : row.active === undefined || row.active >= row.sessions
      ? `${row.sessions.toLocaleString('en-US')}${row.sessions > GUARD_SESSIONS ? ', each touched in turn (all running)' : ''}`
      : `${row.sessions.toLocaleString('en-US')} held, events to ${row.active.toLocaleString('en-US')} (the rest hibernated)`;

/**
 * The session actor's ingest step in process (`supervisor.ask` of `session.ingest`, no HTTP), per
 * event, a row per count of sessions held: wall time (median of interleaved rounds) and bytes
 * allocated, against the 1,000-session row. Throws when the step allocates twice its recorded
 * baseline.
 */
export async function stepSuite(options: StepOptions): Promise<{ markdown: string; guard: string }> {
  const runs = options.rows.map((row) => ({ row, measured: [] as Measured[] }));
  for (let index = 0; index < options.rounds; index += 1) {
    for (const { row, measured } of runs)
      measured.push(await measure(row, Math.max(options.count, row.active ?? row.sessions)));
  }
  const isGuardRow = (row: StepRow) => row.sessions === GUARD_SESSIONS && row.active === undefined && !row.field;
  // The flatness target compares holding 100,000 sessions with holding 1,000.
  const reference = median((runs.find(({ row }) => isGuardRow(row)) ?? runs[0]!).measured.map((m) => m.ns_per_event));
  const rows = runs.map(({ row, measured }) => {
    const ns = median(measured.map((m) => m.ns_per_event));
    // Over a single session the figure is the system's own start-up, not a session's.
    const heap =
      row.sessions >= GUARD_SESSIONS
        ? round(median(measured.map((m) => m.heap_per_session))).toLocaleString('en-US')
        : 'n/a';
    return [
      rowName(row),
      round(ns / 1000, 1),
      round(median(measured.map((m) => m.bytes_per_event))).toLocaleString('en-US'),
      (ns / reference).toFixed(2),
      heap,
    ];
  });
  const guarded = runs.find(({ row }) => isGuardRow(row))?.measured ?? [
    await measure({ sessions: GUARD_SESSIONS }, options.count),
  ];
  const bytes = median(guarded.map((m) => m.bytes_per_event));
  const guard = `Regression guard: ${round(bytes).toLocaleString('en-US')} B allocated per event at ${GUARD_SESSIONS.toLocaleString('en-US')} sessions, baseline ${STEP_BYTES_BASELINE.toLocaleString('en-US')} B (fails at 2×) → ${(bytes / STEP_BYTES_BASELINE).toFixed(2)}×`;
  if (bytes > 2 * STEP_BYTES_BASELINE)
    throw new Error(
      `${guard}: the ingest step allocates more than twice its baseline (bench/suites/step.ts, BENCHMARKS.md)`,
    );
  return {
    markdown: table(
      [
        'sessions',
        'µs per event (median wall)',
        'bytes allocated per event',
        'time vs 1,000 sessions',
        'heap per session (bytes, its activity items included)',
      ],
      rows,
    ),
    guard,
  };
}
