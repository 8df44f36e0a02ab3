import { describe, expect, it } from 'vitest';
import { armIdleTimer, idleForTtl, idleTimerDeadline, rearmIdleTimer } from '../../src/domain/idle-timer.js';

const TTL = 60_000;

describe('idle timer', () => {
  it('is idle at its first deadline when nothing touched the session', () => {
    const timer = armIdleTimer(0, TTL);
    expect(idleTimerDeadline(timer)).toBe(60_000);
    expect(idleForTtl(timer, 0, TTL)).toBe(true);
  });

  it('re-arms for what remains of the TTL since the last touch', () => {
    const timer = armIdleTimer(0, TTL);
    expect(idleForTtl(timer, 50_000, TTL)).toBe(false);
    const next = rearmIdleTimer(timer, 50_000, TTL);
    expect(next).toEqual({ armed_at: 60_000, delay_ms: 50_000 });
    expect(idleForTtl(next, 50_000, TTL)).toBe(true);
  });

  it('re-arms for a whole TTL when the TTL since the last touch is already over (voice kept it alive)', () => {
    const timer = armIdleTimer(0, TTL);
    expect(rearmIdleTimer(timer, 0, TTL)).toEqual({ armed_at: 60_000, delay_ms: TTL });
  });
});
