import type { Logger } from 'pino';
import { mib } from '../domain/log-figures.js';
import { Session } from 'node:inspector/promises';
import { performance } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import type { AppClock } from './clock.js';

/**
 * Gives back the heap a burst left behind. After a flood of sessions hibernates, V8 keeps the heap
 * it grew to committed, and memory outside the heap that garbage still holds stays too: light
 * traffic never calls for the full collection that would free them, so a service that held a
 * flood of sessions kept RSS per idle session that one memory-reducing collection frees
 * (docs/reference/limits.md). Once sessions worth a flood have left memory and stopped leaving, or
 * the process has grown by a flood's worth and stopped growing (a burst of answers: no session
 * left), one is run, at most once a minute, and only after a check interval in which the event loop
 * was mostly idle: the collection stops the loop while it runs.
 */

/** What the decision reads of the process's memory. */
export interface MemoryFigures {
  /** Resident set size, bytes. */
  rss: number;
}

/**
 * A process resident in less than this has too little over an idle service's (about 160 MiB) to
 * give back to be worth a pause. Read as RSS, not V8's committed heap: V8 keeps the pages a
 * collection freed in a pool of its own, outside the committed heap it reports, and only the
 * memory-reducing collection hands them back. After one flood the heap read 97 MB committed while
 * 358 MB sat in that pool, so a guard on the heap never trimmed again (docs/reference/limits.md,
 * "What V8 keeps outside its heap").
 */
export const MIN_RSS_BYTES = 256 * 2 ** 20;
/** The collection pauses the loop for 0.2 s with the sessions gone, up to a second with many held: not more often than this. */
export const MIN_TRIM_INTERVAL_MS = 60_000;
const CHECK_INTERVAL_MS = 15_000;
/**
 * The share of the last check's interval the event loop spent working (Node's event loop
 * utilization) at and above which a trim waits for a quieter interval. The memory-reducing
 * collection stops the loop for as long as it takes to mark the whole live heap, several times
 * over: 181 ms with the sessions hibernated, about a second with 45,000 held and streams open, so
 * one run under an attack made a fresh client wait 1.1 s (docs/reference/limits.md, "A trim waits
 * for a quiet loop").
 */
export const BUSY_LOOP_UTILIZATION = 0.5;

/** Sessions that left memory since the last trim, by the budget's estimate, added up: a flood's worth. */
export const MIN_RELEASED_BYTES = 64 * 2 ** 20;
/** Less than this left memory since the last check: the burst has ended (a trim before its end would leave the rest for the next minute). */
export const SETTLED_BYTES = 16 * 2 ** 20;
/**
 * RSS this far over its lowest reading since the last trim: a burst's worth of growth, whatever
 * made it. A burst of answers (activity pages built for clients that never read them) grows the
 * heap without any session leaving memory, and the heap it grew stays committed
 * (docs/reference/limits.md, "Answers not read").
 */
export const MIN_GROWTH_BYTES = 64 * 2 ** 20;

/**
 * Whether to collect now: sessions worth at least MIN_RELEASED_BYTES left memory since the last
 * trim (added up, however they came and went), less than SETTLED_BYTES left since the last check
 * (they have stopped leaving), the process is resident in at least MIN_RSS_BYTES, and the last trim is
 * a minute old. A steady turnover of sessions trims at most once a minute, and not while more
 * than SETTLED_BYTES leave every 15 s. The heap's own figure of what is in use is no guide: it counts garbage
 * until a full collection runs, which light traffic never calls for, so a heap full of a flood's
 * garbage looks as live as a busy one.
 */
export function shouldTrim(
  memory: MemoryFigures,
  sinceLastTrimMs: number,
  releasedBytes: number,
  releasedSinceLastCheck: number,
): boolean {
  return (
    releasedBytes >= MIN_RELEASED_BYTES &&
    releasedSinceLastCheck < SETTLED_BYTES &&
    sinceLastTrimMs >= MIN_TRIM_INTERVAL_MS &&
    memory.rss >= MIN_RSS_BYTES
  );
}

/**
 * V8's memory-reducing collection: the one the inspector's HeapProfiler.collectGarbage runs, over an
 * in-process session (no port is opened). It compacts and gives the freed pages back; the plain
 * full collection `--expose-gc` offers frees the objects but keeps the heap committed.
 */
async function reduceMemory(): Promise<void> {
  const session = new Session();
  session.connect();
  try {
    await session.post('HeapProfiler.collectGarbage');
  } finally {
    session.disconnect();
  }
}

/** What an operator reads of the trims so far (`GET /api/status`, `memory`). */
export interface HeapTrimStats {
  /** Memory-reducing collections run since the process started. */
  trims: number;
  /** When the last one ended (epoch ms), or null before the first. */
  lastTrimAt: number | null;
  /** Ones that failed (logged as `heap trim failed`). */
  failed: number;
  /** Checks that called for one and waited, the event loop busy (logged as `heap trim deferred`). */
  deferred: number;
}

export interface HeapTrim {
  stop(): void;
  stats(): HeapTrimStats;
}

/**
 * Whether to collect after growth alone: RSS at least MIN_GROWTH_BYTES over its lowest reading since
 * the last trim, less than SETTLED_BYTES over the last check's (it has stopped growing), resident in
 * at least MIN_RSS_BYTES, and the last trim a minute old. Growth that is live (sessions that stay)
 * gives nothing back: the trim after it resets the lowest reading to what stays, so the next one
 * waits for another MIN_GROWTH_BYTES of growth.
 */
export function shouldTrimAfterGrowth(
  memory: MemoryFigures,
  sinceLastTrimMs: number,
  lowestRss: number,
  lastCheckRss: number,
): boolean {
  return (
    memory.rss - lowestRss >= MIN_GROWTH_BYTES &&
    memory.rss - lastCheckRss < SETTLED_BYTES &&
    sinceLastTrimMs >= MIN_TRIM_INTERVAL_MS &&
    memory.rss >= MIN_RSS_BYTES
  );
}

/**
 * The trim's decision from one check to the next. `releasedTotal` is what the sessions that left
 * memory were counted at, all added up since the process started (the memory budget's
 * `releasedBytes`): a count that only grows. The peak of what the budget held less what it holds
 * now, which this used, missed a rolling flood: with sessions hibernating a few seconds after
 * their event, 50,000 new sessions came and went without the budget ever holding 64 MiB of them,
 * no trim ran, and a minute later each idle session still cost 10 KiB of RSS (docs/reference/limits.md).
 */
export class TrimDecision {
  private lastTrim = Number.NEGATIVE_INFINITY;
  private atLastTrim: number;
  private atLastCheck: number;
  /** The lowest RSS read since the last trim (or the start), and the last check's. */
  private lowestRss = Number.POSITIVE_INFINITY;
  private lastCheckRss = Number.POSITIVE_INFINITY;
  private waited = false;

  constructor(releasedTotal: number) {
    this.atLastTrim = releasedTotal;
    this.atLastCheck = releasedTotal;
  }

  /**
   * At a check (`nowMs` monotonic): whether to trim now; if so the trim is taken as done now.
   * `loopUtilization` is the share of the interval since the last check the event loop worked: at
   * BUSY_LOOP_UTILIZATION or more the trim waits, and the next quiet check decides as this one would have.
   */
  check(memory: MemoryFigures, releasedTotal: number, nowMs: number, loopUtilization = 0): boolean {
    const sinceLastCheck = releasedTotal - this.atLastCheck;
    this.atLastCheck = releasedTotal;
    const lastCheckRss = this.lastCheckRss;
    this.lastCheckRss = memory.rss;
    this.lowestRss = Math.min(this.lowestRss, memory.rss);
    const sinceLastTrimMs = nowMs - this.lastTrim;
    const called =
      shouldTrim(memory, sinceLastTrimMs, releasedTotal - this.atLastTrim, sinceLastCheck) ||
      shouldTrimAfterGrowth(memory, sinceLastTrimMs, this.lowestRss, lastCheckRss);
    this.waited = called && loopUtilization >= BUSY_LOOP_UTILIZATION;
    if (!called || this.waited) return false;
    this.lastTrim = nowMs;
    this.atLastTrim = releasedTotal;
    // What stays after the trim is read when it ends (trimmed), or else at the next check.
    this.lowestRss = Number.POSITIVE_INFINITY;
    return true;
  }

  /** Whether the last check called for a trim and waited for a quieter loop. */
  get deferred(): boolean {
    return this.waited;
  }

  /**
   * The RSS read as a trim ended: the lowest since it. Read at the next check instead, a burst
   * that went on after the trim would hide how far it fell: 585 MiB fell to 388 and was back at 545
   * by the next check, and that 545 would have been taken for what stays.
   */
  trimmed(memory: MemoryFigures): void {
    this.lowestRss = Math.min(this.lowestRss, memory.rss);
  }
}

export interface HeapTrimOptions {
  /** What the sessions that left memory were counted at, added up since the start (MemoryBudget.releasedBytes). */
  releasedBytes: () => number;
  clock: Pick<AppClock, 'now'>;
  /** Run after each trim: what else a burst left to give back (SQLite's page cache). */
  afterTrim?: (() => void) | undefined;
}

/**
 * Checks every 15 s in the background; stop() ends it. The timer never keeps the process alive.
 * `clock` dates the trims an operator reads; the pause and the minute between trims are timed on
 * the monotonic clock.
 */
export function startHeapTrim(logger: Logger, { releasedBytes, clock, afterTrim }: HeapTrimOptions): HeapTrim {
  const stats: HeapTrimStats = { trims: 0, lastTrimAt: null, failed: 0, deferred: 0 };
  const decision = new TrimDecision(releasedBytes());
  let loop = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const checkedAt = performance.now();
    const rssBefore = process.memoryUsage.rss();
    const loopNow = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(loopNow, loop);
    loop = loopNow;
    if (!decision.check({ rss: rssBefore }, releasedBytes(), checkedAt, utilization)) {
      if (decision.deferred) {
        stats.deferred += 1;
        logger.info(
          { loop_utilization: Math.round(utilization * 100) / 100, rss_mib: mib(rssBefore) },
          'heap trim deferred: the event loop was busy, and the collection would stop it',
        );
      }
      return;
    }
    const before = getHeapStatistics();
    reduceMemory().then(
      () => {
        afterTrim?.();
        decision.trimmed({ rss: process.memoryUsage.rss() });
        stats.trims += 1;
        stats.lastTrimAt = clock.now();
        const after = getHeapStatistics();
        // In MiB: the logs' identity masking (src/logger.ts) masks a number of nine digits or more, as it would an account number.
        logger.info(
          {
            rss_before_mib: mib(rssBefore),
            rss_after_mib: mib(process.memoryUsage.rss()),
            heap_committed_before_mib: mib(before.total_heap_size),
            heap_committed_after_mib: mib(after.total_heap_size),
            heap_used_after_mib: mib(after.used_heap_size),
            pause_ms: Math.round(performance.now() - checkedAt),
          },
          'heap trimmed: a memory-reducing collection gave back the heap a burst left',
        );
      },
      (error: unknown) => {
        stats.failed += 1;
        logger.warn({ err: error }, 'heap trim failed');
      },
    );
  }, CHECK_INTERVAL_MS);
  timer.unref();
  return { stop: () => clearInterval(timer), stats: () => ({ ...stats }) };
}
