import fc from 'fast-check';
import { fromPromise } from 'xstate';
import { redactForIngest } from '../../src/domain/event-redaction.js';
import { EventInSchema } from '../../src/domain/sdk-event.js';
import { loadKnowledgeBase } from '../../src/integrations/knowledge-base.js';
import type { SessionCommand } from '../../src/machines/session/machine-events.js';
import type { SessionSettings } from '../../src/machines/session/session-context.js';
import type { FindAgentInput, IssuedToken, RoomInput, TokenInput } from '../../src/machines/session/media-contract.js';
import { sessionMachine } from '../../src/machines/session/machine.js';
import { loadConfig } from '../../src/config.js';

/**
 * Random sessions for holding a faster path to the machine: SDK events of every kind (typed
 * fields, schemas, oversized notes), the other commands, and waits that let timers fire, as
 * fast-check arbitraries, with the command each step sends and a machine whose media calls answer
 * at once.
 */
export const config = loadConfig({});
export const knowledgeBase = loadKnowledgeBase(config.voice.knowledgeBaseFile);
export const settings: SessionSettings = {
  schemaRegistry: true,
  criticalSteps: ['pan_details'],
  mediaReady: false,
  mediaRoomPrefix: 'kyc',
  reengagementInactivitySeconds: 300,
  idleTtlMs: 900_000,
  sessionMaxBytes: 4096,
  voiceSilenceMs: 300_000,
  agentJoinMs: 10_000,
  agentDispatchAttempts: 3,
  roomCheckMs: 30_000,
};
export const START = Date.UTC(2026, 10, 23, 9, 0, 0);
export const trace = { trace_id: 't', request_id: 'r' };

export const media = sessionMachine.provide({
  actors: {
    mintToken: fromPromise<IssuedToken, TokenInput>(async () => ({
      token: 'token',
      url: 'wss://media.example',
      expires_in_sec: 600,
    })),
    createRoom: fromPromise<void, RoomInput>(async () => {}),
    findAgentDispatch: fromPromise<string | null, FindAgentInput>(async () => null),
    dispatchAgent: fromPromise<string, RoomInput>(async () => 'dispatch'),
    deleteRoom: fromPromise<void, RoomInput>(async () => {}),
  },
});

export const SCREENS = ['intro', 'pan_details', 'selfie', 'Aadhaar_Details'];
export const screen = fc.constantFrom(...SCREENS);
export const rawEvent = fc.oneof(
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
  fc.record({
    event: fc.constant('validation_failed'),
    screen,
    component_id: fc.constant('pan_field'),
    errors: fc.constant(['invalid_format']),
    failure_reason_code: fc.constant('FORMAT'),
  }),
  fc.record({ event: fc.constant('error_reported'), screen, error_code: fc.constantFrom('E1', 'E2') }),
  fc.record({
    event: fc.constant('screen_schema'),
    screen,
    properties: fc.record({
      schema_hash: fc.constantFrom('h1', 'h2'),
      components: fc.constant([{ id: 'pan_field', validation: { pattern: '^[A-Z]{5}[0-9]{4}[A-Z]$' } }]),
    }),
  }),
  fc.record({ event: fc.constantFrom('agent_speech', 'assistant_response', 'screen_view'), screen }),
);

export type Step =
  | { kind: 'ingest'; raw: Record<string, unknown> }
  | { kind: 'trigger' | 'start' | 'stop' | 'dropoff' | 'cancel' | 'flow' | 'context' }
  | { kind: 'wait'; ms: number };

export const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: rawEvent.map((raw) => ({ kind: 'ingest' as const, raw: { session_id: 's1', user_id: 'u1', ...raw } })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Step>(
      { kind: 'trigger' },
      { kind: 'start' },
      { kind: 'stop' },
      { kind: 'dropoff' },
      { kind: 'cancel' },
      { kind: 'flow' },
      { kind: 'context' },
    ),
  },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 400_000 }).map((ms) => ({ kind: 'wait' as const, ms })) },
);

export function commandFor(
  s: Exclude<Step, { kind: 'wait' }>,
  at: number,
  reply: (value: unknown) => void,
): SessionCommand {
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
      return {
        type: 'dropoff.register',
        user_id: 'u1',
        has_dialable_phone: true,
        phone_last4: '1234',
        reason: 'left',
        at,
        trace,
        reply,
      };
    case 'cancel':
      return { type: 'dropoff.cancel', at, trace, reply };
    case 'flow':
      return {
        type: 'flow.set',
        flow_key: 'kyc',
        step_sequence: SCREENS,
        current_step: null,
        user_id: 'u1',
        client_id: null,
        knowledge_base: knowledgeBase,
        at,
        trace,
        reply,
      };
    case 'context':
      return {
        type: 'context.fetch',
        sources: { knowledgeBase, refreshPolicy: config.voice.contextRefresh },
        dispatch_id: null,
        at,
        trace,
        reply,
      };
  }
}
