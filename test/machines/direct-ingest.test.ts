import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AnyActorRef } from 'xstate';
import { StateMachine, createActor } from 'xstate';
import { assertIngestIsContextOnly, withDirectIngest } from '../../src/machines/session/direct-ingest.js';
import type { SessionMachine } from '../../src/machines/session/machine.js';
import { sessionMachine } from '../../src/machines/session/machine.js';
import { dueIdleCheck } from '../../src/machines/session/presence.js';
import { DeadlineClock } from '../support/deadline-clock.js';
import { settle } from '../support/harness.js';
import type { Step } from '../support/random-session-steps.js';
import { commandFor, media, settings, START, step } from '../support/random-session-steps.js';

/**
 * `withDirectIngest` applies an SDK event without XState's macrostep. These tests hold it to the
 * machine: the same random command sequences, clock moves included, go to a session on the plain
 * machine and to one on the wrapped logic, and after every step both have the same state value,
 * context, emissions and replies.
 */

/** A session on `logic`, with everything it emits and answers written down in order. */
function session(logic: SessionMachine) {
  const clock = new DeadlineClock();
  clock.set(START);
  const seen: unknown[] = [];
  const actor = createActor(logic, { id: 's1', clock, input: { sessionId: 's1', at: START, settings } });
  actor.on('*', (emitted) => seen.push({ emitted }));
  actor.start();
  return {
    actor,
    clock,
    seen,
    send(s: Exclude<Step, { kind: 'wait' }>) {
      actor.send(commandFor(s, clock.now(), (value) => seen.push({ reply: value })));
    },
    /**
     * Time passes: timers fire, and the idle check is sent once due, as the host sends it
     * (docs/decisions/0043-the-idle-check-sent-by-the-host.md).
     */
    wait(ms: number) {
      clock.increment(ms);
      const snapshot = actor.getSnapshot();
      const check = snapshot.status === 'active' ? dueIdleCheck(snapshot.context, clock.now()) : undefined;
      if (check) actor.send(check);
    },
  };
}

/** What two sessions must agree on; `machine` is XState's own (the same object on both sides). */
const observable = (actor: AnyActorRef) => {
  const { status, value, context } = actor.getSnapshot() as {
    status: string;
    value: unknown;
    context: Record<string, unknown>;
  };
  return { status, value, context: { ...context, settings: undefined } };
};

describe('SDK events without the macrostep (withDirectIngest)', () => {
  it('leaves the machine and its media actors as they are for every other command', () => {
    const direct = withDirectIngest(media);
    expect(direct.root).toBe(media.root);
    expect(direct.implementations).toBe(media.implementations);
    expect(direct.config).toBe(media.config);
  });

  it('gives the same snapshots, emissions and replies as the machine, over random sessions', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), async (steps) => {
        const plain = session(media);
        const direct = session(withDirectIngest(media));
        for (const s of steps) {
          for (const side of [plain, direct]) {
            if (s.kind === 'wait') side.wait(s.ms);
            else side.send(s);
          }
          // Media actors answer on promises: both sides settle before they are compared.
          await settle();
          expect(observable(direct.actor)).toEqual(observable(plain.actor));
          expect(direct.seen).toEqual(plain.seen);
        }
        plain.actor.stop();
        direct.actor.stop();
      }),
      { numRuns: 200 },
    );
  });

  it('takes the machine path while a reengagement timer is armed, which restarts on user activity', async () => {
    const plain = session(media);
    const direct = session(withDirectIngest(media));
    for (const side of [plain, direct]) {
      side.send({ kind: 'dropoff' });
      side.clock.increment(200_000);
      side.send({ kind: 'ingest', raw: { session_id: 's1', event: 'screen_state', screen: 'selfie' } });
      // 300 s after the event, not after the drop-off: the timer was re-armed by the event.
      side.clock.increment(299_000);
    }
    await settle();
    for (const side of [plain, direct]) expect(side.actor.getSnapshot().value).toMatchObject({ reengagement: 'armed' });
    for (const side of [plain, direct]) side.clock.increment(1_000);
    expect(direct.actor.getSnapshot().value).toMatchObject({ reengagement: 'idle' });
    expect(direct.seen).toEqual(plain.seen);
  });

  it('refuses a machine whose SDK events would need the macrostep', () => {
    const { config: definition, implementations } = sessionMachine;
    const variant = (changes: Record<string, unknown>) =>
      new StateMachine({ ...definition, ...changes }, implementations) as unknown as SessionMachine;
    const regions = definition.states as Record<string, { states?: Record<string, Record<string, unknown>> }>;
    const withState = (region: string, state: string, changes: Record<string, unknown>) => ({
      states: {
        ...regions,
        [region]: {
          ...regions[region],
          states: { ...regions[region]!.states, [state]: { ...regions[region]!.states![state], ...changes } },
        },
      },
    });
    expect(() => assertIngestIsContextOnly(variant({}))).not.toThrow();
    expect(() =>
      assertIngestIsContextOnly(
        variant({ on: { ...definition.on, 'session.ingest': { target: '.voice.active', actions: 'ingest' } } }),
      ),
    ).toThrow(/not targetless/);
    expect(() =>
      assertIngestIsContextOnly(
        variant({ on: { ...definition.on, 'session.ingest': { actions: ['ingest', 'touch'] } } }),
      ),
    ).toThrow(/more than the ingest action/);
    expect(() =>
      assertIngestIsContextOnly(variant(withState('trigger', 'ready', { on: { 'session.*': 'cooldown' } }))),
    ).toThrow(/session.trigger.ready handles session.ingest/);
    expect(() =>
      assertIngestIsContextOnly(
        variant(withState('presence', 'live', { always: { guard: 'idleForTtl', target: 'expired' } })),
      ),
    ).toThrow(/guarded eventless/);
  });

  it('leaves a logic given its own ingest action on the machine path', () => {
    const own = sessionMachine.provide({ actions: { ingest: () => undefined } });
    expect(withDirectIngest(own)).toBe(own);
  });
});
