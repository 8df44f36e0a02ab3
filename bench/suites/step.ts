import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { median, round, table } from '../lib/stats.js';

const run = promisify(execFile);

export interface StepOptions {
  /** Sessions the events are spread over, one row each. */
  sessions: number[];
  /** Events per measured run. */
  count: number;
  rounds: number;
}

/**
 * Bytes allocated per ingested event at 1,000 sessions when the guard was last set (BENCHMARKS.md,
 * "Ninth round": 3,760-3,830 with the JSON sizes counted by the redaction pass; 4,675 in the fourth
 * round, when SDK events began to be applied by `ingestStep` directly; 23,000 through XState's
 * macrostep). Allocation hardly moves with the load on the machine (runs
 * agree within 1-2%), so unlike time it can fail a run: twice this is a regression, not noise.
 */
export const STEP_BYTES_BASELINE = 3_800;
const GUARD_SESSIONS = 1_000;

interface Measured {
  ns_per_event: number;
  bytes_per_event: number;
}

async function measure(sessions: number, count: number): Promise<Measured> {
  const { stdout } = await run(process.execPath, ['--expose-gc', 'bench/step-worker.ts', String(sessions), String(count)], { maxBuffer: 1024 * 1024 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Measured;
}

/**
 * The session actor's ingest step in process (`supervisor.ask` of `session.ingest`, no HTTP), per
 * event, over 1, 1,000 and 100,000 sessions: wall time (median of interleaved rounds) and bytes
 * allocated. Throws when the step allocates twice its recorded baseline.
 */
export async function stepSuite(options: StepOptions): Promise<{ markdown: string; guard: string }> {
  const runs = new Map<number, Measured[]>(options.sessions.map((sessions) => [sessions, []]));
  for (let index = 0; index < options.rounds; index += 1) {
    for (const sessions of options.sessions) runs.get(sessions)!.push(await measure(sessions, Math.max(options.count, sessions)));
  }
  // The flatness target compares holding 100,000 sessions with holding 1,000.
  const reference = median((runs.get(GUARD_SESSIONS) ?? runs.get(options.sessions[0]!)!).map((m) => m.ns_per_event));
  const rows = options.sessions.map((sessions) => {
    const measured = runs.get(sessions)!;
    const ns = median(measured.map((m) => m.ns_per_event));
    return [sessions.toLocaleString('en-US'), round(ns / 1000, 1), round(median(measured.map((m) => m.bytes_per_event))).toLocaleString('en-US'), (ns / reference).toFixed(2)];
  });
  const guarded = runs.get(GUARD_SESSIONS) ?? [await measure(GUARD_SESSIONS, options.count)];
  const bytes = median(guarded.map((m) => m.bytes_per_event));
  const guard = `Regression guard: ${round(bytes).toLocaleString('en-US')} B allocated per event at ${GUARD_SESSIONS.toLocaleString('en-US')} sessions, baseline ${STEP_BYTES_BASELINE.toLocaleString('en-US')} B (fails at 2×) → ${(bytes / STEP_BYTES_BASELINE).toFixed(2)}×`;
  if (bytes > 2 * STEP_BYTES_BASELINE) throw new Error(`${guard}: the ingest step allocates more than twice its baseline (bench/suites/step.ts, BENCHMARKS.md)`);
  return {
    markdown: table(['sessions', 'µs per event (median wall)', 'bytes allocated per event', 'time vs 1,000 sessions'], rows),
    guard,
  };
}
