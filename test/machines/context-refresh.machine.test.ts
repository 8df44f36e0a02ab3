import { describe, expect, it } from 'vitest';
import { SimulatedClock, createActor, fromPromise } from 'xstate';
import type { RefreshPolicy } from '../../src/domain/refresh-policy.js';
import type { FetchContextInput } from '../../src/machines/context-refresh.machine.js';
import { contextRefreshMachine } from '../../src/machines/context-refresh.machine.js';
import { settle } from '../support/harness.js';

const SECOND = 1000;
const DEFAULTS: RefreshPolicy = { interval_seconds: 60, on_user_turn: true, min_interval_seconds: 5 };

type Respond = (call: number) => Promise<unknown>;

/**
 * A voice agent's refresh loop on a simulated clock. `starts` holds the clock time at which each
 * fetch began; `respond` decides each fetch's outcome (default: an immediate success).
 */
function agent(policy: RefreshPolicy | undefined = DEFAULTS, respond: Respond = async (call) => ({ call })) {
  const clock = new SimulatedClock();
  const starts: number[] = [];
  const fetchContext = fromPromise<unknown, FetchContextInput>(({ input }) => {
    expect(input.sessionId).toBe('s1');
    starts.push(clock.now());
    return respond(starts.length);
  });
  const actor = createActor(contextRefreshMachine.provide({ actors: { fetchContext } }), {
    clock,
    input: { sessionId: 's1', ...(policy ? { policy } : {}) },
  });
  const emitted: string[] = [];
  actor.on('*', (event) => emitted.push(event.type));
  actor.start();
  return {
    actor,
    clock,
    starts,
    emitted,
    /** Moves simulated time on, letting each fetch that started resolve before the next timer. */
    async advance(ms: number, step = ms) {
      for (let done = 0; done < ms; done += step) {
        clock.increment(Math.min(step, ms - done));
        await settle();
      }
    },
    async turn() {
      actor.send({ type: 'user.turn' });
      await settle();
    },
  };
}

describe('context refresh machine: periodic', () => {
  it('fetches on start, then interval_seconds after each fetch', async () => {
    const a = agent();
    await settle();
    expect(a.starts).toEqual([0]);
    expect(a.actor.getSnapshot().context.latest).toEqual({ call: 1 });
    await a.advance(60 * SECOND - 1);
    expect(a.starts).toEqual([0]);
    await a.advance(1);
    expect(a.starts).toEqual([0, 60 * SECOND]);
    await a.advance(120 * SECOND, SECOND);
    expect(a.starts).toEqual([0, 60 * SECOND, 120 * SECOND, 180 * SECOND]);
    expect(a.actor.getSnapshot().context.fetches).toBe(4);
    expect(a.emitted.filter((type) => type === 'context.updated')).toHaveLength(4);
  });

  it('follows the policy it was started with until a fetched context serves another', async () => {
    const served: RefreshPolicy = { interval_seconds: 30, on_user_turn: false, min_interval_seconds: 2 };
    const a = agent(undefined, async (call) =>
      call === 1 ? { context: { refresh_policy: served } } : { context: {} },
    );
    await settle();
    expect(a.actor.getSnapshot().context.policy).toEqual(served);
    await a.advance(30 * SECOND);
    expect(a.starts).toEqual([0, 30 * SECOND]);
    // The served policy turned refresh-on-turn off.
    await a.turn();
    expect(a.starts).toHaveLength(2);
    // A response without a valid policy keeps the last one.
    await a.advance(30 * SECOND);
    expect(a.starts).toEqual([0, 30 * SECOND, 60 * SECOND]);
  });
});

describe('context refresh machine: user turns', () => {
  it('a turn outside the minimum interval refreshes at once, and the next tick counts from that fetch', async () => {
    const a = agent();
    await settle();
    await a.advance(10 * SECOND);
    await a.turn();
    expect(a.starts).toEqual([0, 10 * SECOND]);
    await a.advance(60 * SECOND - 1);
    expect(a.starts).toHaveLength(2);
    await a.advance(1);
    expect(a.starts).toEqual([0, 10 * SECOND, 70 * SECOND]);
  });

  it('turns inside the minimum interval wait for it to end and then cause one fetch', async () => {
    const a = agent();
    await settle();
    await a.advance(1 * SECOND);
    await a.turn();
    await a.advance(2 * SECOND);
    await a.turn();
    await a.turn();
    expect(a.starts).toEqual([0]);
    await a.advance(2 * SECOND - 1);
    expect(a.starts).toEqual([0]);
    await a.advance(1);
    expect(a.starts).toEqual([0, 5 * SECOND]);
    await a.advance(5 * SECOND);
    expect(a.starts).toHaveLength(2);
  });

  it('a turn during a slow fetch is served by one more fetch, the minimum interval after it ends', async () => {
    let release: (() => void) | undefined;
    const a = agent(DEFAULTS, (call) =>
      call === 1 ? new Promise((resolve) => (release = () => resolve({ call }))) : Promise.resolve({ call }),
    );
    await a.advance(3 * SECOND);
    await a.turn();
    expect(a.actor.getSnapshot().value).toBe('fetching');
    release?.();
    await settle();
    expect(a.starts).toEqual([0]);
    await a.advance(5 * SECOND, SECOND);
    expect(a.starts).toEqual([0, 8 * SECOND]);
  });

  it('ignores turns when on_user_turn is off: only the periodic tick fetches', async () => {
    const a = agent({ ...DEFAULTS, on_user_turn: false });
    await settle();
    await a.advance(10 * SECOND);
    await a.turn();
    await a.advance(10 * SECOND);
    await a.turn();
    expect(a.starts).toEqual([0]);
    await a.advance(40 * SECOND);
    expect(a.starts).toEqual([0, 60 * SECOND]);
    expect(a.actor.getSnapshot().context.turnPending).toBe(false);
  });

  it('never starts two fetches closer than the minimum interval, nor further apart than the interval, whatever the turns', async () => {
    const a = agent({ interval_seconds: 20, on_user_turn: true, min_interval_seconds: 5 });
    await settle();
    // A fixed pseudo-random schedule of turns and pauses (LCG), so the run is reproducible.
    let seed = 7;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 300; i += 1) {
      if (next() < 0.4) await a.turn();
      // Whole seconds in one-second steps: the simulated clock fires a timer due inside one
      // increment at the increment's end, so steps on the policy's grain keep the times exact.
      await a.advance(Math.floor(next() * 4) * SECOND, SECOND);
    }
    const gaps = a.starts.slice(1).map((start, index) => start - a.starts[index]!);
    expect(a.starts.length).toBeGreaterThan(50);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(5 * SECOND);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(20 * SECOND);
    // Turns really did pull fetches forward: most gaps are shorter than the periodic interval.
    expect(gaps.filter((gap) => gap < 20 * SECOND).length).toBeGreaterThan(gaps.length / 2);
  });
});

describe('context refresh machine: failures', () => {
  it('a failed fetch is reported and retried on the next tick, not before', async () => {
    const a = agent(DEFAULTS, async (call) => {
      if (call <= 2) throw new Error('service unavailable');
      return { call };
    });
    await settle();
    expect(a.actor.getSnapshot().context).toMatchObject({ latest: null, consecutiveFailures: 1 });
    expect(a.emitted).toEqual(['context.failed']);
    await a.advance(60 * SECOND - 1, SECOND);
    expect(a.starts).toEqual([0]);
    await a.advance(1);
    expect(a.starts).toEqual([0, 60 * SECOND]);
    expect(a.actor.getSnapshot().context.consecutiveFailures).toBe(2);
    await a.advance(60 * SECOND);
    expect(a.actor.getSnapshot().context).toMatchObject({
      latest: { call: 3 },
      consecutiveFailures: 0,
      lastError: null,
      fetches: 1,
    });
    expect(a.emitted).toEqual(['context.failed', 'context.failed', 'context.updated']);
  });

  it('a user turn after a failure retries once the minimum interval has passed', async () => {
    const a = agent(DEFAULTS, async (call) => {
      if (call === 1) throw new Error('timeout');
      return { call };
    });
    await settle();
    await a.turn();
    expect(a.starts).toEqual([0]);
    await a.advance(5 * SECOND);
    expect(a.starts).toEqual([0, 5 * SECOND]);
    expect(a.actor.getSnapshot().context.latest).toEqual({ call: 2 });
  });

  it('without a fetchContext implementation it fails clearly instead of fetching nothing', async () => {
    const clock = new SimulatedClock();
    const actor = createActor(contextRefreshMachine, { clock, input: { sessionId: 's1' } });
    actor.start();
    await settle();
    expect(String(actor.getSnapshot().context.lastError)).toMatch(/fetchContext is not provided/);
    expect(actor.getSnapshot().context.policy).toEqual(DEFAULTS);
  });
});
