import type { CpuSets } from './cpu-sets.js';

/** What the ingestion suite's pinned verdict reads (bench/suites/ingestion.ts). */
export interface PinnedIngestion {
  serviceOverExpress: number;
  sqliteOverExpress: number;
  p99: { memory: number; sqlite: number; express: number };
}

/**
 * The targets of a pinned run (BENCHMARKS.md: "Pinned"): the memory store at 0.85 of bare express
 * with its p99 within twice express's; the SQLite store at 0.6 on one core, 0.75 on two, where
 * work that need not run on the main thread can move to the second.
 */
const MEMORY_TARGET = 0.85;
const SQLITE_TARGET: Record<number, number> = { 1: 0.6, 2: 0.75 };

/**
 * The pinned ratios of the last accepted full run, per cores given to each server. A run more than
 * a fifth below them fails the bench: on pinned cores the ratios move by a few hundredths between
 * runs, so a drop of that size is a change in the code, not noise. The ratios are the guard rather
 * than req/s, which follow the machine.
 */
export const PINNED_BASELINES: Record<number, { memory: number; sqlite: number }> = {
  // 2026-11-27, 2 × AMD EPYC, Node 24.21, full mode, wrk on CPU 1: 1.07 and 0.60 (BENCHMARKS.md, "Pinned").
  1: { memory: 1.07, sqlite: 0.6 },
};
const GUARD_FRACTION = 0.8;

const verdict = (met: boolean) => (met ? '(met)' : '(missed)');

/** The pinned targets and the regression guard, as the report's sentence; throws when the guard trips. */
export function pinnedVerdict(cpus: CpuSets, run: PinnedIngestion): string {
  const sqliteTarget = SQLITE_TARGET[cpus.serverCores] ?? SQLITE_TARGET[2]!;
  const p99Within = run.p99.memory <= 2 * run.p99.express;
  const targets =
    `Pinned targets (${cpus.serverCores} core${cpus.serverCores > 1 ? 's' : ''} per server): ` +
    `STORE=memory ≥ ${MEMORY_TARGET} × bare express with p99 ≤ 2 × express's → ${run.serviceOverExpress.toFixed(2)}, ` +
    `p99 ${run.p99.memory.toFixed(1)} against ${run.p99.express.toFixed(1)} ms ${verdict(run.serviceOverExpress >= MEMORY_TARGET && p99Within)}; ` +
    `STORE=sqlite ≥ ${sqliteTarget} → ${run.sqliteOverExpress.toFixed(2)} ${verdict(run.sqliteOverExpress >= sqliteTarget)}.`;
  const baseline = PINNED_BASELINES[cpus.serverCores];
  if (!baseline) return `${targets} Regression guard: no pinned baseline for ${cpus.serverCores}-core servers yet.`;
  const memoryShare = run.serviceOverExpress / baseline.memory;
  const sqliteShare = run.sqliteOverExpress / baseline.sqlite;
  const guard =
    `Regression guard: pinned ratios against their baselines (${baseline.memory} memory, ${baseline.sqlite} SQLite; ` +
    `fails below ${GUARD_FRACTION}×) → ${memoryShare.toFixed(2)}× and ${sqliteShare.toFixed(2)}×`;
  if (memoryShare < GUARD_FRACTION || sqliteShare < GUARD_FRACTION)
    throw new Error(`${guard}: the request path got slower (bench/lib/pinned-targets.ts, BENCHMARKS.md)`);
  return `${targets} ${guard}.`;
}
