/**
 * Idle eviction without restarting a timer on every command. The timer stays armed while the
 * session is used; commands only record when they touched it. When the timer fires it either
 * finds the session idle for the whole TTL, or re-arms itself for what remains. The deadline is
 * kept in the session context; a session woken from hibernation arms a fresh one, since the
 * command that wakes it also touches it. The machine has no clock: it
 * takes a firing to happen at its deadline, so a timer that fires late (a blocked event loop, a
 * suspended host) makes eviction late by as much, never early.
 */
export interface IdleTimer {
  armed_at: number;
  delay_ms: number;
}

export const armIdleTimer = (at: number, ttlMs: number): IdleTimer => ({ armed_at: at, delay_ms: ttlMs });

/** When the armed timer fires: the time, as far as the session is concerned, at which it is checked. */
export const idleTimerDeadline = (timer: IdleTimer): number => timer.armed_at + timer.delay_ms;

export function idleForTtl(timer: IdleTimer, lastTouchedAt: number, ttlMs: number): boolean {
  return idleTimerDeadline(timer) - lastTouchedAt >= ttlMs;
}

/** The next check: when the TTL since the last touch runs out, or a whole TTL on when that is past (voice still running). */
export function rearmIdleTimer(timer: IdleTimer, lastTouchedAt: number, ttlMs: number): IdleTimer {
  const now = idleTimerDeadline(timer);
  const remaining = lastTouchedAt + ttlMs - now;
  return { armed_at: now, delay_ms: remaining > 0 ? remaining : ttlMs };
}
