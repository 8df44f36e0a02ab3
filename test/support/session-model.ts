import type {
  ActorLogic,
  AnyActorScope,
  AnyEventObject,
  EventFromLogic,
  ExecutableActionObject,
  SnapshotFrom,
} from 'xstate';
import { createEmptyActor } from 'xstate';
import type { AgentContextSources } from '../../src/domain/agent-context.js';
import { idleTimerDeadline } from '../../src/domain/idle-timer.js';
import { DEFAULT_SDK_CONFIG } from '../../src/domain/sdk-config.js';
import { EventInSchema } from '../../src/domain/sdk-event.js';
import { redactForIngest } from '../../src/domain/event-redaction.js';
import type { Reply, SessionCommand } from '../../src/machines/session/machine-events.js';
import type { SessionInput, SessionSettings } from '../../src/machines/session/session-context.js';
import type { SessionMachine } from '../../src/machines/session/machine.js';
import { sessionMachine } from '../../src/machines/session/machine.js';
import { isVoiceActive, MAX_WAITING_VOICE_COMMANDS } from '../../src/machines/session/media-contract.js';
import type { GateOutcome } from './livekit-stand-in.js';
import { activitySignature } from './session-invariants.js';

/** What a client can do to a session, through the HTTP API. */
export type ClientCommand = 'ingest' | 'turn' | 'context' | 'trigger' | 'popup' | 'start' | 'stop';
/** How the media call in flight ends (see the stand-in's gates). */
export type MediaEvent = { type: 'media.ok' } | { type: 'media.fail' } | { type: 'media.lost' };
export type ModelEvent = { type: ClientCommand } | MediaEvent | { type: 'tick' };

const OUTCOME: Record<MediaEvent['type'], GateOutcome> = {
  'media.ok': 'ok',
  'media.fail': 'fail',
  'media.lost': 'lost',
};
export const isMediaEvent = (event: ModelEvent): event is MediaEvent => Object.hasOwn(OUTCOME, event.type);
export const outcomeOf = (event: MediaEvent): GateOutcome => OUTCOME[event.type];

type SessionSnapshot = SnapshotFrom<SessionMachine>;
type MediaActor =
  'createRoom' | 'findAgentDispatch' | 'dispatchAgent' | 'mintToken' | 'deleteRoom' | 'checkAgent' | 'replaceDispatch';

interface Timer {
  id: string;
  event: AnyEventObject;
  deadline: number;
  seq: number;
}

interface MediaCall {
  actorId: string;
  src: MediaActor;
  input: { preferredId?: string | null; staleId?: string | null };
  serial: number;
}

interface Answer {
  command: number;
  value: unknown;
}

export interface ModelState {
  /** Null until a command creates the session, as the supervisor creates it. */
  session: SessionSnapshot | null;
  /** The session announced its own expiry: the supervisor has evicted it. */
  expired: boolean;
  now: number;
  timers: Timer[];
  call: MediaCall | null;
  /** The media server's view of this session's room. */
  server: { room: boolean; dispatches: string[]; agent: boolean };
  /** What the session emitted to the activity list, as `activitySignature`s. */
  activity: string[];
  /** Every command sent; a command's number is its index. */
  sent: ClientCommand[];
  /** Commands answered by the last step, and commands still waiting for an answer. */
  answered: Answer[];
  unanswered: number[];
  serial: number;
}

export type ModelSnapshot = ModelState & { status: 'active' | 'done'; output: undefined; error: undefined };

export interface SessionModelOptions {
  sessionId: string;
  userId: string;
  /** The settings the service gives every session. */
  settings: SessionSettings;
  sources: AgentContextSources;
  startTime: number;
  /**
   * `instant`: every media call succeeds at once, as the media actors would if they were instant
   * fakes. `stepwise`: each call is a step of its own that succeeds, fails, or does its work and
   * loses its answer, and commands may arrive while it runs.
   */
  media: 'instant' | 'stepwise';
  commands: readonly ClientCommand[];
}

/** The journey's screens (docs/decisions/0017-what-the-deployed-sdks-do.md); each trigger is evaluated on the next one. */
const JOURNEY = [
  'phone_entry',
  'phone_otp',
  'email_entry',
  'email_otp',
  'pan_details',
  'personal_details',
  'verify_documents',
  'digilocker_aadhaar',
  'upload_aadhaar_front',
  'upload_aadhaar_back',
  'selfie_capture',
  'signature',
];

/** The media server call each media actor makes, as the stand-in records it. */
export const MEDIA_METHOD: Record<Exclude<MediaActor, 'mintToken'>, string> = {
  createRoom: 'CreateRoom',
  findAgentDispatch: 'ListDispatch',
  dispatchAgent: 'CreateDispatch',
  deleteRoom: 'DeleteRoom',
  // The room is listed first: a call that fails there fails before its participants are.
  checkAgent: 'ListRooms',
  // The last of its calls (a stale dispatch is deleted first): the one whose answer ends it.
  replaceDispatch: 'CreateDispatch',
};

/** What the model and the replay both send for a command: the same bodies, so the same effect. */
export interface ModelRequest {
  method: 'get' | 'post';
  path: string;
  body?: Record<string, unknown>;
}

export function requestFor(
  ids: { sessionId: string; userId: string },
  model: ModelState,
  command: ClientCommand,
): ModelRequest {
  const { sessionId, userId } = ids;
  const envelope = { session_id: sessionId, user_id: userId, client_id: 'kycis_demo', mapping_version: 'v1' };
  switch (command) {
    case 'ingest':
      return {
        method: 'post',
        path: '/v1/events',
        body: {
          ...envelope,
          event: 'component_input',
          screen: 'pan_details',
          screen_id: 'pan_details',
          component_id: 'pan_field',
          component_type: 'text_input',
          hint: 'ABCDE1234F',
          masked: false,
        },
      };
    case 'turn':
      return {
        method: 'post',
        path: '/v1/events',
        body: {
          ...envelope,
          event: 'voice_conversation_turn',
          screen: 'pan_details',
          properties: { role: 'user', text_chars: 42 },
        },
      };
    case 'context':
      return { method: 'get', path: `/v1/assistant/context/${sessionId}` };
    case 'trigger': {
      const screen = JOURNEY[model.sent.filter((sent) => sent === 'trigger').length % JOURNEY.length]!;
      return {
        method: 'post',
        path: '/v1/assistant/trigger/evaluate',
        body: { session_id: sessionId, user_id: userId, signals: { screen, time_spent: 25 } },
      };
    }
    case 'popup':
      // Idling on a critical step: shown when the session is neither in voice nor in the popup cooldown.
      return {
        method: 'post',
        path: '/v1/assistant/popup/evaluate',
        body: { session_id: sessionId, user_id: userId, signals: { screen: 'pan_details', idle_seconds: 20 } },
      };
    case 'start':
      return {
        method: 'post',
        path: '/v1/assistant/session/start',
        body: { session_id: sessionId, user_id: userId, screen: 'pan_details' },
      };
    case 'stop':
      return { method: 'post', path: '/v1/assistant/session/stop', body: { session_id: sessionId, user_id: userId } };
  }
}

const TRACE = { trace_id: 'model', request_id: 'model' };
/** The model sends no SDK config overrides, so the default tenant's cooldown applies. */
const COOLDOWN_MS = DEFAULT_SDK_CONFIG.thresholds.min_trigger_interval_seconds * 1000;

/** Where the replies of the transition being computed go; replies of waiting commands arrive in later steps. */
let answering: Answer[] = [];

const timerName = (id: string): string => id.split('.')[2] ?? id;
/** The host's idle check, named as the machine's `after` delay was. */
const IDLE_CHECK = 'idleCheck';

function commandFor(
  options: SessionModelOptions,
  model: ModelState,
  command: ClientCommand,
  number: number,
): SessionCommand {
  const reply: Reply<unknown> = (value) => answering.push({ command: number, value });
  const { body } = requestFor(options, model, command);
  const at = model.now;
  switch (command) {
    case 'ingest':
    case 'turn':
      return { type: 'session.ingest', ...redactForIngest(EventInSchema.parse(body)), at, trace: TRACE, reply };
    case 'context':
      return { type: 'context.fetch', at, trace: TRACE, sources: options.sources, dispatch_id: null, reply };
    case 'trigger': {
      const signals = (body as { signals: { screen: string; time_spent: number } }).signals;
      const evaluation = {
        user_id: options.userId,
        client_id: null,
        header_client_id: null,
        sdk_overrides: {},
        at,
        trace: TRACE,
        reply,
      };
      return {
        type: 'trigger.evaluate',
        signals: { ...signals, errors: undefined, idle_seconds: undefined },
        ...evaluation,
      };
    }
    case 'popup': {
      const signals = (body as { signals: { screen: string; idle_seconds: number } }).signals;
      return {
        type: 'popup.evaluate',
        signals: { ...signals, time_spent: undefined, errors: undefined },
        user_id: options.userId,
        client_id: null,
        header_client_id: null,
        sdk_overrides: {},
        popups_enabled: true,
        knowledge_base: options.sources.knowledgeBase,
        at,
        trace: TRACE,
        reply,
      };
    }
    case 'start':
      return {
        type: 'voice.start',
        at,
        trace: TRACE,
        user_id: options.userId,
        screen: 'pan_details',
        invocation_id: `inv-${at}`,
        reply,
      };
    case 'stop':
      return { type: 'voice.stop', sdk_overrides: {}, header_client_id: null, at, trace: TRACE, reply };
  }
}

/**
 * Steps the machine as xstate's pure `transition` does, collecting the actions instead of
 * running them, but with one inert scope for every step: building a scope per step (as
 * `transition` does) costs five times the step itself, and path generation takes thousands.
 */
class PureStepper {
  private collected: ExecutableActionObject[] = [];
  private readonly scope: AnyActorScope;

  constructor(private readonly machine: SessionMachine) {
    const self = createEmptyActor();
    this.scope = {
      self,
      id: '',
      sessionId: '',
      system: self.system,
      logger: () => {},
      defer: () => {},
      emit: () => {},
      stopChild: () => {},
      actionExecutor: (action) => this.collected.push(action),
    };
  }

  initial(input: SessionInput): [SessionSnapshot, ExecutableActionObject[]] {
    return this.collect(() => this.machine.getInitialSnapshot(this.scope, input));
  }

  step(snapshot: SessionSnapshot, event: AnyEventObject): [SessionSnapshot, ExecutableActionObject[]] {
    return this.collect(() => this.machine.transition(snapshot, event as EventFromLogic<SessionMachine>, this.scope));
  }

  private collect(run: () => SessionSnapshot): [SessionSnapshot, ExecutableActionObject[]] {
    this.collected = [];
    const snapshot = run();
    return [snapshot, this.collected];
  }
}

/** A model step works on a copy; the snapshot it started from stays as it was. */
class Step {
  readonly state: ModelState;
  constructor(
    private readonly machine: PureStepper,
    private readonly options: SessionModelOptions,
    from: ModelState,
  ) {
    this.state = {
      ...from,
      timers: [...from.timers],
      server: { room: from.server.room, dispatches: [...from.server.dispatches], agent: from.server.agent },
      activity: [...from.activity],
      sent: [...from.sent],
      answered: [],
    };
  }

  send(command: ClientCommand): void {
    const number = this.state.sent.length;
    if (!this.state.session) {
      const [session, actions] = this.machine.initial({
        sessionId: this.options.sessionId,
        at: this.state.now,
        settings: this.options.settings,
      });
      this.state.session = session;
      this.effects(actions);
    }
    this.state.unanswered = [...this.state.unanswered, number];
    this.deliver(commandFor(this.options, this.state, command, number));
    this.state.sent.push(command);
  }

  /** The pending media call ends as the media server answers it, changing the server as it would. */
  answerCall(outcome: GateOutcome): void {
    const call = this.state.call!;
    const server = this.state.server;
    const worked = outcome !== 'fail';
    let output: unknown;
    switch (call.src) {
      case 'createRoom':
        if (worked) server.room = true;
        break;
      case 'findAgentDispatch':
        output = server.dispatches.find((id) => id === call.input.preferredId) ?? server.dispatches[0] ?? null;
        break;
      case 'dispatchAgent':
        if (worked) {
          server.room = true;
          server.dispatches.push(`AD_${(this.state.serial += 1)}`);
          output = server.dispatches.at(-1);
          // The stand-in has a worker up: its agent joins the room as the dispatch is made.
          server.agent = true;
        }
        break;
      case 'checkAgent':
        output = !server.room ? 'room_gone' : server.agent ? 'present' : 'absent';
        break;
      case 'replaceDispatch':
        if (worked) {
          server.dispatches = server.dispatches.filter((id) => id !== call.input.staleId);
          server.dispatches.push(`AD_${(this.state.serial += 1)}`);
          output = server.dispatches.at(-1);
          server.agent = true;
        }
        break;
      case 'deleteRoom':
        if (worked) {
          server.room = false;
          server.dispatches = [];
          server.agent = false;
        }
        break;
      case 'mintToken':
        output = { token: 'model-token', url: 'ws://model', expires_in_sec: 3600 };
        break;
    }
    this.deliver(
      outcome === 'ok'
        ? { type: `xstate.done.actor.${call.actorId}`, output }
        : { type: `xstate.error.actor.${call.actorId}`, error: new Error(`media call: ${outcome}`) },
    );
  }

  /** Minting is local (no media server), so it never waits on anything: it ends at once. */
  finishLocalCalls(instant: boolean): void {
    while (this.state.call && (instant || this.state.call.src === 'mintToken')) this.answerCall('ok');
  }

  /** The clock moves to the earliest deadline and every timer due then fires, as the simulated clock fires them. */
  tick(): void {
    const now = Math.min(...this.state.timers.map((timer) => timer.deadline));
    this.state.now = now;
    const due = this.state.timers
      .filter((timer) => timer.deadline <= now)
      .sort((a, b) => a.deadline - b.deadline || a.seq - b.seq);
    for (const timer of due) {
      if (this.state.expired) break;
      this.state.timers = this.state.timers.filter((pending) => pending !== timer);
      this.deliver(timer.event);
    }
  }

  private deliver(event: AnyEventObject): void {
    const [session, actions] = this.machine.step(this.state.session!, event);
    this.state.session = session;
    this.effects(actions);
  }

  private effects(actions: ExecutableActionObject[]): void {
    answering = [];
    for (const action of actions) this.effect(action);
    this.armIdleCheck();
    this.state.answered = [...this.state.answered, ...answering];
    const answered = new Set(answering.map((answer) => answer.command));
    this.state.unanswered = this.state.unanswered.filter((number) => !answered.has(number));
  }

  /**
   * The host's idle check, kept among the timers: the service sends it when the session's idle
   * deadline comes (docs/decisions/0043-the-idle-check-sent-by-the-host.md), and a re-armed
   * deadline is a new timer, as a re-armed `after` was.
   */
  private armIdleCheck(): void {
    if (!this.state.session || this.state.expired) return;
    const deadline = idleTimerDeadline(this.state.session.context.idle_timer);
    if (this.state.timers.some((timer) => timer.id === IDLE_CHECK && timer.deadline === deadline)) return;
    this.state.timers = this.state.timers.filter((timer) => timer.id !== IDLE_CHECK);
    this.state.timers.push({
      id: IDLE_CHECK,
      event: { type: 'session.idle_check', at: deadline },
      deadline,
      seq: (this.state.serial += 1),
    });
  }

  private effect(action: ExecutableActionObject): void {
    const params = action.params as Record<string, unknown>;
    switch (action.type) {
      case 'xstate.raise':
        if (params.delay === undefined) return;
        this.state.timers = this.state.timers.filter((timer) => timer.id !== params.id);
        this.state.timers.push({
          id: params.id as string,
          event: params.event as AnyEventObject,
          deadline: this.state.now + (params.delay as number),
          seq: (this.state.serial += 1),
        });
        return;
      case 'xstate.cancel':
        this.state.timers = this.state.timers.filter((timer) => timer.id !== params.sendId);
        return;
      case 'xstate.spawnChild':
        this.state.call = {
          actorId: params.id as string,
          src: params.src as MediaActor,
          input: params.input as MediaCall['input'],
          serial: (this.state.serial += 1),
        };
        return;
      case 'xstate.stopChild':
        if (this.state.call?.actorId === (params as { id?: string }).id) this.state.call = null;
        return;
      case 'xstate.emit': {
        const emitted = params.event as { type: string; draft?: { kind: string; payload: Record<string, unknown> } };
        if (emitted.draft) this.state.activity.push(activitySignature(emitted.draft.kind, emitted.draft.payload));
        if (emitted.type === 'session.expired') {
          this.state.expired = true;
          this.state.timers = [];
        }
        return;
      }
      default:
        // The machine's own actions are its replies to commands.
        if (!action.type.startsWith('xstate.')) action.exec?.(action.info, action.params);
    }
  }
}

const snapshot = (state: ModelState): ModelSnapshot => ({
  ...state,
  status: state.expired ? 'done' : 'active',
  output: undefined,
  error: undefined,
});

export type SessionModelLogic = ActorLogic<ModelSnapshot, ModelEvent, undefined> & {
  options: SessionModelOptions;
  initial(): ModelSnapshot;
  events: (model: ModelSnapshot) => ModelEvent[];
  next(model: ModelSnapshot, event: ModelEvent): ModelSnapshot;
  /** For shortest paths: the abstract state, marked with the event when that left it unchanged. */
  serializeState: (model: ModelSnapshot, event: ModelEvent | undefined, previous: ModelSnapshot | undefined) => string;
};

const voiceOf = (session: SessionSnapshot | null): unknown =>
  (session?.value as { voice?: unknown } | undefined)?.voice;

/**
 * One session as its client and its surroundings see it, for path generation with `xstate/graph`.
 * The session itself is the REAL session machine, stepped with xstate's pure `transition`; around
 * it the model keeps what the running service keeps: the clock and the timers the machine
 * scheduled, the media call in flight, a media server's room and agent dispatches, the replies the
 * machine gave and the activity it emitted. Its events are what a client or the surroundings can
 * do next, so a generated path is something a replay can do to the real service, step by step.
 */
export function createSessionModel(options: SessionModelOptions): SessionModelLogic {
  const machine = new PureStepper(sessionMachine);
  const instant = options.media === 'instant';

  const first = snapshot({
    session: null,
    expired: false,
    now: options.startTime,
    timers: [],
    call: null,
    server: { room: false, dispatches: [], agent: false },
    activity: [],
    sent: [],
    answered: [],
    unanswered: [],
    serial: 0,
  });
  // Snapshots are never changed once made, so each step is computed once: every generator call
  // walks the graph again from the same first snapshot, and every replay walks it once more.
  const steps = new WeakMap<ModelSnapshot, Map<string, ModelSnapshot>>();

  const next = (model: ModelSnapshot, event: ModelEvent): ModelSnapshot => {
    const known = steps.get(model) ?? new Map<string, ModelSnapshot>();
    steps.set(model, known);
    const cached = known.get(event.type);
    if (cached) return cached;
    const step = new Step(machine, options, model);
    if (event.type === 'tick') step.tick();
    else if (isMediaEvent(event)) step.answerCall(outcomeOf(event));
    else step.send(event.type);
    step.finishLocalCalls(instant);
    const result = snapshot(step.state);
    known.set(event.type, result);
    return result;
  };
  const initial = () => first;

  const events = (model: ModelSnapshot): ModelEvent[] => {
    if (model.expired) return [];
    const voice = voiceOf(model.session);
    const waiting = model.session?.context.voiceWork.waiting.length ?? 0;
    const commands = options.commands.filter((command) => {
      // Without a session only what creates one; the agent speaks and fetches only in a running voice session.
      if (!model.session) return command === 'ingest' || command === 'trigger' || command === 'start';
      if (command === 'turn' || command === 'context') return voice === 'active';
      // A voice command past the waiting limit is refused (503) and changes nothing: that refusal
      // has its own test (livekit-media.test.ts), and offering it here would add a path per state.
      if (command === 'start' || command === 'stop') return waiting < MAX_WAITING_VOICE_COMMANDS;
      return true;
    });
    const all: ModelEvent[] = commands.map((type) => ({ type }));
    const call = model.call;
    if (call) {
      all.push({ type: 'media.ok' });
      if (call.src !== 'mintToken') all.push({ type: 'media.fail' });
      // Listing does no work to lose, and a room already gone is no failure.
      if (call.src === 'createRoom' || call.src === 'dispatchAgent' || (call.src === 'deleteRoom' && model.server.room))
        all.push({ type: 'media.lost' });
    } else if (model.timers.length > 0 && model.unanswered.length === 0) {
      all.push({ type: 'tick' });
    }
    return all;
  };

  const reengagementMs = options.settings.reengagementInactivitySeconds * 1000;
  return {
    options,
    initial,
    events,
    next,
    serializeState: serializeWith((model) => abstractState(model, reengagementMs)),
    transition: next,
    getInitialSnapshot: initial,
    getPersistedSnapshot: (model) => model,
  };
}

/**
 * The session as its machine holds it, with times, ids, screens and texts left out so the graph
 * stays finite: its state value, the voice commands waiting, whether it knows a dispatch, the
 * media server's room and dispatch count, and the order of its pending timers.
 */
function machineFacts(model: ModelState) {
  const { context, value } = model.session!;
  const timers = [...model.timers].sort((a, b) => a.deadline - b.deadline || a.seq - b.seq);
  return {
    value,
    waiting: context.voiceWork.waiting.map((command) => command.type),
    dispatch: context.voice.dispatch_id !== null,
    // Whether the call's agent watch saw its agent: a resume of a call whose agent was heard checks for it first.
    agentHeard: context.agent_watch ? context.agent_watch.joined_at !== null : null,
    // Two is already one too many: counting on would make a broken machine's graph endless.
    server: [model.server.room, Math.min(model.server.dispatches.length, 2), model.server.agent],
    timers: timers.map(
      (timer, i) => (i > 0 && timers[i - 1]!.deadline === timer.deadline ? '=' : '') + timerName(timer.id),
    ),
  };
}

const voiceIsActive = (model: ModelState): boolean =>
  model.session !== null && !model.expired && isVoiceActive(model.session.value);

const withoutSession = (model: ModelState): string | undefined =>
  !model.session ? 'no session' : model.expired ? 'evicted' : undefined;

/**
 * The machine's own states: what simple paths are enumerated over. Whether the agent was heard is
 * left out here: every route through the states once more with it and without doubled the paths,
 * and shortest paths (abstractState) still reach each state with it.
 */
export const machineState = (model: ModelState): string =>
  withoutSession(model) ?? JSON.stringify({ ...machineFacts(model), agentHeard: undefined });

/**
 * The machine's states refined by time: what the spec says of it, worked out from the session
 * record rather than from the machine's timers (whether the last fired trigger is within its
 * cooldown; after a stop of an active session, whether its reengagement is still to come, with
 * the user back since the stop or not and time passed since the user was last seen, or overdue),
 * and how the machine armed its reengagement timer. A machine whose timer outlives, or falls short
 * of, what the spec says then reaches a state of its own, which shortest paths visit; a correct
 * one reaches no more states than its own timers give.
 */
function abstractState(model: ModelState, reengagementMs: number): string {
  const absent = withoutSession(model);
  if (absent) return absent;
  const { last_trigger_at, last_user_activity_at, voice, reengagement } = model.session!.context;
  // The cooldown runs from the last fired trigger or the last stop of an active session by a client.
  const stoppedByClient =
    voice.stopped_at !== null &&
    model.activity.findLast((item) => item.startsWith('session_stop:active')) === 'session_stop:active';
  const lastOffer = Math.max(
    last_trigger_at ?? Number.NEGATIVE_INFINITY,
    stoppedByClient ? voice.stopped_at! : Number.NEGATIVE_INFINITY,
  );
  const coolingDown = model.now - lastOffer < COOLDOWN_MS;
  let toCome: unknown = null;
  // A start cancels what a stop armed: only an inactive session has a reengagement to come.
  if (voice.stopped_at !== null && !voiceIsActive(model)) {
    const lastSeen = Math.max(voice.stopped_at, last_user_activity_at ?? voice.stopped_at);
    if (model.now < lastSeen + reengagementMs)
      toCome = { userBack: lastSeen > voice.stopped_at, quiet: model.now > lastSeen };
    else if (reengagement !== null) toCome = 'overdue';
  }
  // How the machine armed its reengagement timer: again, later, when the user came back after
  // the stop; and whether time has passed since (user activity now would move its deadline).
  const armed = reengagement && {
    rearmed: reengagement.armed_at !== voice.stopped_at,
    since: model.now > reengagement.armed_at,
  };
  return JSON.stringify({ spec: { coolingDown, reengagement: toCome }, armed, ...machineFacts(model) });
}

/**
 * The model's state for path generation: its abstract state, and, when the event left that
 * unchanged, the event too, so that every event a state ignores or absorbs is still taken once.
 */
function serializeWith(abstract: (model: ModelState) => string) {
  return (model: ModelSnapshot, event: ModelEvent | undefined, previous: ModelSnapshot | undefined): string => {
    const key = abstract(model);
    return event && previous && abstract(previous) === key ? `${key} after ${event.type}` : key;
  };
}
