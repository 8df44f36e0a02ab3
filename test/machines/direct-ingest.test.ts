import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AnyActorRef } from 'xstate';
import { StateMachine, createActor, fromPromise } from 'xstate';
import { redactForIngest } from '../../src/domain/event-redaction.js';
import { EventInSchema } from '../../src/domain/sdk-event.js';
import { loadKnowledgeBase } from '../../src/integrations/knowledge-base.js';
import { assertIngestIsContextOnly, withDirectIngest } from '../../src/machines/session/direct-ingest.js';
import type { SessionCommand } from '../../src/machines/session/events.js';
import type { SessionSettings } from '../../src/machines/session/context.js';
import type { SessionMachine } from '../../src/machines/session/machine.js';
import type { FindAgentInput, IssuedToken, RoomInput, TokenInput } from '../../src/machines/session/voice.js';
import { sessionMachine } from '../../src/machines/session/machine.js';
import { loadConfig } from '../../src/config.js';
import { DeadlineClock } from '../support/deadline-clock.js';
import { settle } from '../support/harness.js';

/**
 * `withDirectIngest` applies an SDK event without XState's macrostep. These tests hold it to the
 * machine: the same random command sequences, clock moves included, go to a session on the plain
 * machine and to one on the wrapped logic, and after every step both have the same state value,
 * context, emissions and replies.
 */
const config = loadConfig({});
const knowledgeBase = loadKnowledgeBase(config.voice.knowledgeBaseFile);
const settings: SessionSettings = {
  schemaRegistry: true,
  criticalSteps: ['pan_details'],
  mediaReady: false,
  mediaRoomPrefix: 'kyc',
  reengagementInactivitySeconds: 300,
  idleTtlMs: 900_000,
  sessionMaxBytes: 4096,
  voiceSilenceMs: 300_000,
};
const START = Date.UTC(2026, 10, 23, 9, 0, 0);
const trace = { trace_id: 't', request_id: 'r' };

const media = sessionMachine.provide({
  actors: {
    mintToken: fromPromise<IssuedToken, TokenInput>(async () => ({ token: 'token', url: 'wss://media.example', expires_in_sec: 600 })),
    createRoom: fromPromise<void, RoomInput>(async () => {}),
    findAgentDispatch: fromPromise<string | null, FindAgentInput>(async () => null),
    dispatchAgent: fromPromise<string, RoomInput>(async () => 'dispatch'),
    deleteRoom: fromPromise<void, RoomInput>(async () => {}),
  },
});

const SCREENS = ['intro', 'pan_details', 'selfie', 'Aadhaar_Details'];
const screen = fc.constantFrom(...SCREENS);
const rawEvent = fc.oneof(
  fc.record({ event: fc.constant('screen_state'), screen }),
  fc.record({
    event: fc.constant('component_input'),
    screen,
    component_id: fc.constantFrom('pan_field', 'name', 'dob', 'city'),
    component_type: fc.constant('text_input'),
    hint: fc.constantFrom('ABCDE1234F', 'Ravi', '1990-01-01', 'x'.repeat(1000), 'ravi@example.com'),
    properties: fc.option(fc.record({ field_status: fc.constantFrom('FILLED', 'EMPTY') }), { nil: undefined }),
    // Past SESSION_MAX_BYTES (4 KiB here) within a few events: older data gives way.
    notes: fc.option(fc.constant('y'.repeat(2000)), { nil: undefined }),
  }),
  fc.record({ event: fc.constant('validation_failed'), screen, component_id: fc.constant('pan_field'), errors: fc.constant(['invalid_format']), failure_reason_code: fc.constant('FORMAT') }),
  fc.record({ event: fc.constant('error_reported'), screen, error_code: fc.constantFrom('E1', 'E2') }),
  fc.record({
    event: fc.constant('screen_schema'),
    screen,
    properties: fc.record({ schema_hash: fc.constantFrom('h1', 'h2'), components: fc.constant([{ id: 'pan_field', validation: { pattern: '^[A-Z]{5}[0-9]{4}[A-Z]$' } }]) }),
  }),
  fc.record({ event: fc.constantFrom('agent_speech', 'assistant_response', 'screen_view'), screen }),
);

type Step =
  | { kind: 'ingest'; raw: Record<string, unknown> }
  | { kind: 'trigger' | 'start' | 'stop' | 'dropoff' | 'cancel' | 'flow' | 'context' }
  | { kind: 'wait'; ms: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: rawEvent.map((raw) => ({ kind: 'ingest' as const, raw: { session_id: 's1', user_id: 'u1', ...raw } })) },
  { weight: 1, arbitrary: fc.constantFrom<Step>({ kind: 'trigger' }, { kind: 'start' }, { kind: 'stop' }, { kind: 'dropoff' }, { kind: 'cancel' }, { kind: 'flow' }, { kind: 'context' }) },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 400_000 }).map((ms) => ({ kind: 'wait' as const, ms })) },
);

function commandFor(s: Exclude<Step, { kind: 'wait' }>, at: number, reply: (value: unknown) => void): SessionCommand {
  const evaluation = { user_id: 'u1', client_id: null, header_client_id: null, sdk_overrides: {}, at, trace };
  switch (s.kind) {
    case 'ingest': {
      const { event, matchHint } = redactForIngest(EventInSchema.parse(s.raw));
      return { type: 'session.ingest', event, matchHint, at, trace, reply };
    }
    case 'trigger':
      return { type: 'trigger.evaluate', signals: { errors: ['E1', 'E1', 'E1'] }, ...evaluation, reply };
    case 'start':
      return { type: 'voice.start', user_id: 'u1', screen: null, invocation_id: `inv-${at}`, at, trace, reply };
    case 'stop':
      return { type: 'voice.stop', sdk_overrides: {}, header_client_id: null, at, trace, reply };
    case 'dropoff':
      return { type: 'dropoff.register', user_id: 'u1', has_dialable_phone: true, phone_last4: '1234', reason: 'left', at, trace, reply };
    case 'cancel':
      return { type: 'dropoff.cancel', at, trace, reply };
    case 'flow':
      return { type: 'flow.set', flow_key: 'kyc', step_sequence: SCREENS, current_step: null, user_id: 'u1', client_id: null, knowledge_base: knowledgeBase, at, trace, reply };
    case 'context':
      return { type: 'context.fetch', sources: { knowledgeBase, refreshPolicy: config.voice.contextRefresh }, at, trace, reply };
  }
}

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
  };
}

/** What two sessions must agree on; `machine` is XState's own (the same object on both sides). */
const observable = (actor: AnyActorRef) => {
  const { status, value, context } = actor.getSnapshot() as { status: string; value: unknown; context: Record<string, unknown> };
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
            if (s.kind === 'wait') side.clock.increment(s.ms);
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
    const variant = (changes: Record<string, unknown>) => new StateMachine({ ...definition, ...changes }, implementations) as unknown as SessionMachine;
    const regions = definition.states as Record<string, { states?: Record<string, Record<string, unknown>> }>;
    const withState = (region: string, state: string, changes: Record<string, unknown>) => ({
      states: { ...regions, [region]: { ...regions[region], states: { ...regions[region]!.states, [state]: { ...regions[region]!.states![state], ...changes } } } },
    });
    expect(() => assertIngestIsContextOnly(variant({}))).not.toThrow();
    expect(() => assertIngestIsContextOnly(variant({ on: { ...definition.on, 'session.ingest': { target: '.voice.active', actions: 'ingest' } } }))).toThrow(/not targetless/);
    expect(() => assertIngestIsContextOnly(variant({ on: { ...definition.on, 'session.ingest': { actions: ['ingest', 'touch'] } } }))).toThrow(/more than the ingest action/);
    expect(() => assertIngestIsContextOnly(variant(withState('trigger', 'ready', { on: { 'session.*': 'cooldown' } })))).toThrow(/session.trigger.ready handles session.ingest/);
    expect(() => assertIngestIsContextOnly(variant(withState('presence', 'live', { always: { guard: 'idleForTtl', target: 'expired' } })))).toThrow(/guarded eventless/);
  });

  it('leaves a logic given its own ingest action on the machine path', () => {
    const own = sessionMachine.provide({ actions: { ingest: () => undefined } });
    expect(withDirectIngest(own)).toBe(own);
  });
});
