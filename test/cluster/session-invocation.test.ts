import { describe, expect, it } from 'vitest';
import type { InspectionEvent } from 'xstate';
import { fromPromise } from 'xstate';
import { runSessionInvocation } from '../../src/cluster/session-invocation.js';
import { fromWireCommand, isWireCommand, toWireCommand } from '../../src/cluster/command-wire.js';
import type { AgentContextSources } from '../../src/domain/agent-context.js';
import type {
  IngestResult,
  SessionCommand,
  TriggerEvaluateCommand,
} from '../../src/machines/session/machine-events.js';
import { sessionMachine } from '../../src/machines/session/machine.js';
import type { AgentPresence } from '../../src/domain/voice-session.js';
import type { FindAgentInput, ReplaceDispatchInput, RoomInput } from '../../src/machines/session/media-contract.js';
import type { StoredSession } from '../../src/store/ports.js';
import { invocationSettings } from '../support/invocation-settings.js';

/** The adapter's pieces that need no Restate server: one invocation of the machine, and the command's wire form. */

const T0 = 1_800_000_000_000;
const settings = invocationSettings;
const trace = { trace_id: 't', request_id: 'r' };

const ingest = (screen: string, at: number) => (reply: (value: unknown) => void) =>
  ({
    type: 'session.ingest',
    event: { session_id: 's1', event: 'screen_view', screen },
    at,
    trace,
    reply,
  }) as unknown as SessionCommand;

const evaluate =
  (at: number) =>
  (reply: (value: unknown) => void): TriggerEvaluateCommand => ({
    type: 'trigger.evaluate',
    signals: { errors: ['pan_invalid', 'pan_invalid_format'] },
    user_id: null,
    client_id: null,
    header_client_id: null,
    sdk_overrides: { '*': { thresholds: { min_trigger_interval_seconds: 30 } } },
    at,
    trace,
    reply,
  });

const run = (
  stored: StoredSession | undefined,
  at: number,
  command?: (reply: (value: unknown) => void) => SessionCommand,
) => runSessionInvocation({ logic: sessionMachine, sessionId: 's1', settings, at, stored, command });

describe('one invocation of a session hosted elsewhere: notices to the voice agent', () => {
  const start = (at: number) => (reply: (value: unknown) => void) =>
    ({
      type: 'voice.start',
      at,
      trace,
      user_id: 'u1',
      screen: 'pan_details',
      invocation_id: 'inv-1',
      reply,
    }) as unknown as SessionCommand;
  const typed = (at: number) => (reply: (value: unknown) => void) =>
    ({
      type: 'session.ingest',
      event: { session_id: 's1', event: 'component_input', component_id: 'pan_field', hint: 'x', masked: true },
      at,
      trace,
      reply,
    }) as unknown as SessionCommand;

  // Placeholder media: the token is minted locally, no other media call is made.
  const logic = sessionMachine.provide({
    actors: { mintToken: fromPromise(async () => ({ token: 'placeholder.t', url: '', expires_in_sec: 3600 })) },
  });
  const runPlaceholder = (
    stored: StoredSession | undefined,
    at: number,
    command: (reply: (value: unknown) => void) => SessionCommand,
  ) => runSessionInvocation({ logic, sessionId: 's1', settings, at, stored, command });

  it('with placeholder media a running call makes no notice (there is no room to send it to)', async () => {
    const started = await runPlaceholder(undefined, T0, start(T0));
    expect(started.stored!.summary.voice).toBe('active');
    const input = await runPlaceholder(started.stored!, T0 + 1000, typed(T0 + 1000));
    expect(input.notices).toEqual([]);
  });
});

describe("one invocation of a session hosted elsewhere: the agent watch's media calls", () => {
  // Each media call answers a turn of the event loop later, as a real one does.
  const later = <T>(value: T) => new Promise<T>((resolve) => setImmediate(() => resolve(value)));
  const calls: string[] = [];
  const logic = sessionMachine.provide({
    actors: {
      createRoom: fromPromise<void, RoomInput>(() => (calls.push('createRoom'), later<void>(undefined))),
      findAgentDispatch: fromPromise<string | null, FindAgentInput>(
        () => (calls.push('findAgentDispatch'), later<string | null>(null)),
      ),
      dispatchAgent: fromPromise<string, RoomInput>(() => (calls.push('dispatchAgent'), later('AD_1'))),
      mintToken: fromPromise(() => later({ token: 't', url: 'ws://media', expires_in_sec: 3600 })),
      checkAgent: fromPromise<AgentPresence, RoomInput>(
        () => (calls.push('checkAgent'), later<AgentPresence>('absent')),
      ),
      replaceDispatch: fromPromise<string, ReplaceDispatchInput>(() => (calls.push('replaceDispatch'), later('AD_2'))),
    },
  });
  const withMedia = { ...settings, mediaReady: true };
  const runWithMedia = (
    stored: StoredSession | undefined,
    at: number,
    command?: (reply: (value: unknown) => void) => SessionCommand,
  ) => runSessionInvocation({ logic, sessionId: 's1', settings: withMedia, at, stored, command });
  const start = (at: number) => (reply: (value: unknown) => void) =>
    ({
      type: 'voice.start',
      at,
      trace,
      user_id: 'u1',
      screen: 'pan_details',
      invocation_id: 'inv-1',
      reply,
    }) as unknown as SessionCommand;

  it('a wake that checks the room waits for the check and the new dispatch: it never ends with the watch stuck mid-call', async () => {
    const started = await runWithMedia(undefined, T0, start(T0));
    expect(started.stored!.value).toMatchObject({ voice: 'active', agent: 'awaiting' });
    const due = T0 + withMedia.agentJoinMs;
    const woken = await runWithMedia(started.stored!, due);
    expect(calls).toEqual(['createRoom', 'findAgentDispatch', 'dispatchAgent', 'checkAgent', 'replaceDispatch']);
    expect(woken.stored!.value).toMatchObject({ agent: 'awaiting' });
    expect(
      woken.activity.filter((draft) => draft.kind === 'voice_agent').map((draft) => draft.payload.outcome),
    ).toEqual(['redispatched']);
  });
});

describe('one invocation of a session hosted elsewhere', () => {
  it('a new session: answers the command, collects its activity, and keeps the idle deadline as its wake', async () => {
    const outcome = await run(undefined, T0, ingest('welcome', T0));
    expect((outcome.reply as IngestResult).ingested_at_ms).toBe(T0);
    expect(outcome.activity.map((draft) => [draft.kind, draft.payload.screen])).toEqual([['event', 'welcome']]);
    expect(outcome.stored!.summary).toMatchObject({ screen: 'welcome', voice: 'inactive' });
    expect(outcome.stored!.wake_at).toBe(T0 + settings.idleTtlMs);
  });

  it('restores from the kept state: the next command sees what the first one left', async () => {
    const first = await run(undefined, T0, ingest('welcome', T0));
    const second = await run(first.stored!, T0 + 1000, ingest('pan_details', T0 + 1000));
    expect(second.stored!.summary).toMatchObject({
      screen: 'pan_details',
      created_at: T0,
      last_activity_at: T0 + 1000,
    });
  });

  it('a fired trigger keeps its cooldown end as the wake; a wake at that time ends the cooldown, and one before it does not', async () => {
    const created = await run(undefined, T0, ingest('pan_details', T0));
    const fired = await run(created.stored!, T0, evaluate(T0));
    expect(fired.reply).toMatchObject({ trigger: true });
    expect(fired.stored!.value).toMatchObject({ trigger: 'cooldown' });
    expect(fired.stored!.wake_at).toBe(T0 + 30_000);
    const early = await run(fired.stored!, T0 + 29_999);
    expect(early.stored!.value).toMatchObject({ trigger: 'cooldown' });
    const due = await run(fired.stored!, T0 + 30_000);
    expect(due.stored!.value).toMatchObject({ trigger: 'ready' });
    expect(due.stored!.wake_at).toBe(T0 + settings.idleTtlMs);
  });

  it('a wake after the idle TTL with nothing under way ends the session: nothing is kept', async () => {
    const created = await run(undefined, T0, ingest('welcome', T0));
    const woken = await run(created.stored!, T0 + settings.idleTtlMs);
    expect(woken.stored).toBeNull();
  });

  it('hands every inspection event to the inspector, under the session id', async () => {
    const seen: InspectionEvent[] = [];
    await runSessionInvocation({
      logic: sessionMachine,
      sessionId: 's1',
      settings,
      at: T0,
      stored: undefined,
      command: ingest('welcome', T0),
      inspect: (event) => seen.push(event),
    });
    expect(
      seen.some(
        (event) =>
          event.type === '@xstate.event' &&
          (event.actorRef as { id?: string }).id === 's1' &&
          (event.event as { type: string }).type === 'session.ingest',
      ),
    ).toBe(true);
  });
});

describe('a command on the wire', () => {
  const sources = {
    knowledgeBase: { steps: {} },
    refreshPolicy: { interval_seconds: 60, on_user_turn: true, min_interval_seconds: 5 },
  } as unknown as AgentContextSources;

  it('leaves behind the reply, the hint matcher and the shared sources, and comes back at the invocation time with local ones', () => {
    const hint = 'ABCDE1234F';
    const command = {
      type: 'session.ingest',
      event: { session_id: 's1', event: 'component_input', screen: 'pan_details' },
      matchHint: (pattern: string) => new RegExp(pattern).test(hint),
      at: T0,
      trace,
      reply: () => undefined,
    } as unknown as SessionCommand;
    const wire = JSON.parse(JSON.stringify(toWireCommand(command))) as unknown;
    expect(JSON.stringify(wire)).not.toContain(hint);
    expect(wire).toEqual({
      type: 'session.ingest',
      event: { session_id: 's1', event: 'component_input', screen: 'pan_details' },
      at: T0,
      trace,
    });
    expect(isWireCommand(wire)).toBe(true);
    const reply = () => undefined;
    const back = fromWireCommand(wire as ReturnType<typeof toWireCommand>, T0 + 5, sources, reply);
    expect(back).toMatchObject({ type: 'session.ingest', at: T0 + 5 });
    expect((back as { reply: unknown }).reply).toBe(reply);
  });

  it('gives a context fetch and a flow this process own sources', () => {
    const fetched = fromWireCommand({ type: 'context.fetch', trace }, T0, sources, () => undefined) as Extract<
      SessionCommand,
      { type: 'context.fetch' }
    >;
    expect(fetched.sources).toBe(sources);
    const flow = fromWireCommand({ type: 'flow.set', flow_key: 'f' }, T0, sources, () => undefined) as Extract<
      SessionCommand,
      { type: 'flow.set' }
    >;
    expect(flow.knowledge_base).toBe(sources.knowledgeBase);
  });

  it('refuses what is not a session command', () => {
    expect(isWireCommand({ type: 'session.restore' })).toBe(false);
    expect(isWireCommand(null)).toBe(false);
    expect(isWireCommand('voice.start')).toBe(false);
  });
});
