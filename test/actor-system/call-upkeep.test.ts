import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { CallUpkeep } from '../../src/actor-system/call-upkeep.js';
import { createHarness, settle } from '../support/harness.js';

const NODE_TIMER_MAX_MS = 2 ** 31 - 1;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * The simulated clock with Node's own limit on a timer: a delay past 2^31-1 ms (or below 1) is
 * made 1 ms, as `setTimeout` does with a TimeoutOverflowWarning. It counts the timers that fire.
 */
class NodeTimerClock extends SimulatedClock {
  fired = 0;
  readonly delays: number[] = [];

  override setTimeout(fn: (...args: unknown[]) => void, timeout: number): number {
    this.delays.push(timeout);
    const delay = timeout > NODE_TIMER_MAX_MS || timeout < 1 ? 1 : timeout;
    return super.setTimeout(() => {
      this.fired += 1;
      fn();
    }, delay);
  }
}

describe('the call upkeep on a 30-day retention', () => {
  it('arms no timer past what Node holds, wakes once before the call is due, and removes the call when it is', async () => {
    const h = createHarness({ env: { STORE: 'sqlite', TRANSCRIPT_RETENTION_DAYS: '30' } });
    // The service's own upkeep rests; the one under test runs on a clock with Node's limit.
    h.system.callUpkeep!.stop();
    const started = await h.http
      .post('/v1/assistant/session/start')
      .send({ session_id: 'kept-30-days', user_id: 'u1' })
      .expect(200);
    const callId = started.body.assistant_invocation_id as string;
    await h.http.post('/v1/assistant/session/stop').send({ session_id: 'kept-30-days' }).expect(200);
    const endedAt = h.clock.now();
    const kept = async () => (await h.http.get(`/api/calls/${callId}`)).status === 200;
    expect(await kept()).toBe(true);

    const clock = new NodeTimerClock();
    clock.set(endedAt);
    const upkeep = new CallUpkeep({
      calls: h.system.calls!,
      clock,
      logger: h.logger,
      send: () => Promise.reject(new Error('no webhook is configured')),
      retentionDays: 30,
    });
    upkeep.start();
    await settle();

    // Up to a minute before the call expires, in steps of six hours: kept, and the timer slept.
    for (let at = endedAt; at + 6 * HOUR_MS < endedAt + 30 * DAY_MS - 60_000; at += 6 * HOUR_MS) {
      clock.increment(6 * HOUR_MS);
      await settle();
    }
    clock.set(endedAt + 30 * DAY_MS - 60_000);
    await settle();
    expect(await kept()).toBe(true);
    // One wake at 2^31-1 ms (24.8 days), which found nothing due and armed the rest.
    expect(clock.fired).toBe(1);
    expect(Math.max(...clock.delays)).toBeLessThanOrEqual(NODE_TIMER_MAX_MS);

    clock.increment(60_000 + 1);
    await settle();
    expect(await kept()).toBe(false);
    expect(clock.fired).toBe(2);
    upkeep.stop();
  });
});
