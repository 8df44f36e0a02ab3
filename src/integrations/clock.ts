/**
 * The one source of time for the whole system. XState's scheduler uses
 * setTimeout/clearTimeout; everything else reads now(). Tests pass xstate's
 * SimulatedClock, which satisfies the same shape.
 */
export interface AppClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
}

export const systemClock: AppClock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const timer = setTimeout(fn, ms);
    // Session timers (idle eviction, reengagement) must never keep a stopping process alive.
    timer.unref();
    return timer;
  },
  clearTimeout(id) {
    clearTimeout(id as NodeJS.Timeout);
  },
};

export const unixSeconds = (ms: number): number => Math.floor(ms / 1000);

let lastMs = Number.NaN;
let lastIso = '';
/** ISO 8601 of an epoch time. Items recorded in the same millisecond (common under load) share one string. */
export function isoTime(ms: number): string {
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastIso;
}
