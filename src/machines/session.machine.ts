import type { SnapshotFrom } from 'xstate';
import { and, assign, emit, enqueueActions, fromPromise, not, raise, setup, stateIn } from 'xstate';
import type { ActivityDraft, ActivityKind, Trace } from '../domain/activity.js';
import { buildAgentContext } from '../domain/agent-context.js';
import { CONTEXT_PUSH_EVENTS } from '../domain/agent-notice.js';
import type { Dropoff } from '../domain/dropoff.js';
import type { ErrorWindow } from '../domain/error-window.js';
import { afterEvent, clearedAfterVoice, heldCodes, newErrorWindow, onScreen, prune, restartAfterTrigger, withRequestCodes } from '../domain/error-window.js';
import type { SessionFlow } from '../domain/flow.js';
import { flowProgress, flowSteps, stepFacts } from '../domain/flow.js';
import type { IdleTimer } from '../domain/idle-timer.js';
import type { PopupDecision } from '../domain/popup.js';
import { hiddenPopup, popupFor } from '../domain/popup.js';
import { armIdleTimer, idleForTtl, idleTimerDeadline, rearmIdleTimer } from '../domain/idle-timer.js';
import type { Reengagement } from '../domain/reengagement.js';
import { evaluateReengagement } from '../domain/reengagement.js';
import { mergeSdkConfig } from '../domain/sdk-config.js';
import { AGENT_EVENT_TYPES } from '../domain/sdk-event.js';
import type { SessionRecord } from '../domain/session-record.js';
import { eventActivityPayload, eventPatch, newSessionRecord } from '../domain/session-record.js';
import { internSchemas } from '../domain/schema-interning.js';
import type { TriggerDecision } from '../domain/trigger-policy.js';
import { evaluateTriggerPolicy, triggerActivityPayload } from '../domain/trigger-policy.js';
import type { TriggerMemory } from '../domain/trigger-suppression.js';
import { coolDownAfterVoice, newTriggerMemory, rememberPrompt, suppressTrigger, wasPrompted } from '../domain/trigger-suppression.js';
import type { VoiceDetails } from '../domain/voice-session.js';
import { NO_VOICE, VoiceWarning, participantIdentity, roomName } from '../domain/voice-session.js';
import type {
  IngestResult,
  PopupInputs,
  SessionCommand,
  SessionEmitted,
  TriggerEvaluateCommand,
  VoiceCommand,
  VoiceStartCommand,
  VoiceStopCommand,
} from './session.events.js';

export interface SessionSettings {
  /** `integration.schema_registry`: when off, screen schemas are neither stored nor announced. */
  schemaRegistry: boolean;
  /** Lower-cased screen ids that count as critical for the trigger policy (`CRITICAL_STEPS`). */
  criticalSteps: string[];
  /** Media credentials are configured; when not, a start makes no media calls (placeholder token). */
  mediaReady: boolean;
  mediaRoomPrefix: string;
  reengagementInactivitySeconds: number;
  /** SESSION_IDLE_TTL_SECONDS in milliseconds: an inactive session untouched this long is evicted. */
  idleTtlMs: number;
  /** SESSION_MAX_BYTES: what the session record may hold (see `withinBudget`). */
  sessionMaxBytes: number;
  /** VOICE_SILENCE_TIMEOUT_SECONDS in milliseconds: an active voice session not heard from this long ends. */
  voiceSilenceMs: number;
}

export interface SessionInput {
  sessionId: string;
  at: number;
  settings: SessionSettings;
  /** The context of a session brought back from the store (see `persistedContext`). */
  restored?: PersistedContext | undefined;
}

/**
 * What the store keeps of a context: everything but the settings (given again at start) and the
 * replies waiting on media work (a restart has no one to answer). Fields are kept generically,
 * so a field added to the context is kept without touching the store.
 */
export type PersistedContext = Omit<SessionContext, 'settings' | 'voiceWork'>;

/** Sent by the supervisor right after a session restored from the store starts: re-arms its timers. */
export interface SessionRestore {
  type: 'session.restore';
  at: number;
  /** The voice region to return to: an active voice session stays active. */
  voice: 'inactive' | 'active';
}

/** A start being carried out: the command it answers and what degraded so far. */
interface StartWork {
  command: VoiceStartCommand;
  resumed: boolean;
  identity: string;
  warnings: string[];
  /** The room could not be created, so the token carries the agent dispatch. */
  dispatchViaToken: boolean;
}

interface StopWork {
  command: VoiceStopCommand;
  warnings: string[];
  /** Ended by the silence check, not by a client: seconds since the call was last heard from. */
  silentSeconds?: number;
}

/** The trace of an expiry for a session stored before the silence check kept its start's. */
const RESTORED_TRACE: Trace = Object.freeze({ trace_id: 'restored', request_id: 'restored' });

/** Replies wait here while media calls run; never shown, and gone once answered. */
interface VoiceWork {
  start: StartWork | null;
  stop: StopWork | null;
  /** Voice commands that arrived while starting or stopping, replayed in order once settled. */
  waiting: VoiceCommand[];
}

interface ReengagementTimer {
  armed_at: number;
  trace: Trace;
}

/**
 * While voice is active: when the call was last heard from (the start or a resume, the agent's
 * context fetch or its telemetry), and the check armed on it, as the idle timer does (a sign of
 * life only notes its time; the check re-arms for what remains). The trace is the start's.
 */
export interface VoiceSilence extends IdleTimer {
  alive_at: number;
  trace: Trace;
}

export interface SessionContext extends SessionRecord {
  settings: SessionSettings;
  /** When a command last reached the session, and the idle-eviction timer now armed. */
  last_touched_at: number;
  idle_timer: IdleTimer;
  trigger: TriggerMemory;
  voice: VoiceDetails;
  voiceWork: VoiceWork;
  /** Set while the reengagement timer runs (the deadline is `armed_at` + the inactivity setting). */
  reengagement: ReengagementTimer | null;
  /** Failures on the current screen, counted by repeated_errors and popups. */
  errors: ErrorWindow;
  flow: SessionFlow | null;
  /** No popup before this time (assistant_prompt_cooldown_seconds after the last one shown). */
  popup_cooldown_until: number | null;
  dropoff: Dropoff | null;
  /** The engagement under way or last run; a new start (not a resume) replaces it. */
  assistant_invocation_id: string | null;
  /** Armed while voice is active; absent in sessions stored before it, then armed on restore. */
  voice_silence?: VoiceSilence | null;
}

/** Internal: a trigger fired, so the trigger region cools down for `cooldownMs`. */
type TriggerFired = { type: 'trigger.fired'; cooldownMs: number };

/** Inputs and outputs of the media actors provided at bootstrap. */
export interface RoomInput {
  room: string;
  sessionId: string;
}
export interface FindAgentInput {
  room: string;
  preferredId: string | null;
}
export interface TokenInput {
  room: string;
  identity: string;
  sessionId: string;
  dispatchAgent: boolean;
}
export interface IssuedToken {
  token: string;
  url: string;
  expires_in_sec: number;
}

/**
 * Voice commands that may wait behind the one in progress. Each waiting start can make three
 * media calls, so this bounds both memory and how long a request can wait (see system.ts).
 */
export const MAX_WAITING_VOICE_COMMANDS = 2;

/** Shared by every session with no voice work under way: updates replace it, never mutate it. */
const NO_VOICE_WORK: VoiceWork = Object.freeze({ start: null, stop: null, waiting: Object.freeze([]) as unknown as VoiceCommand[] });

/** Internal: an SDK event from the user (not agent telemetry) arrived. */
type UserActivity = { type: 'user.activity'; at: number };
type ReengagementArm = { type: 'reengagement.arm'; at: number; trace: Trace };
type ReengagementCancel = { type: 'reengagement.cancel' };

const unprovided = () => Promise.reject(new Error('media actors are provided at bootstrap'));

const activity = (context: SessionContext, kind: ActivityKind, at: number, trace: Trace, payload: Record<string, unknown>): SessionEmitted => ({
  type: 'activity',
  draft: { kind, at, session_id: context.session_id, user_id: context.user_id, trace, payload } satisfies ActivityDraft,
});

const currentRoom = (context: SessionContext): string => roomName(context.settings.mediaRoomPrefix, context.session_id);
const roomInput = ({ context }: { context: SessionContext }): RoomInput => ({ room: currentRoom(context), sessionId: context.session_id });

/** The reengagement rule (docs/decisions/0003-reengagement.md) applied to this session at `now`. */
export function sessionReengagement(context: SessionContext, voiceActive: boolean, now: number): Reengagement {
  return evaluateReengagement({
    now,
    lastUserActivityAt: context.last_user_activity_at ?? context.created_at,
    voiceActive,
    hadVoiceSession: context.voice.started_at !== null,
    inactivityThresholdSeconds: context.settings.reengagementInactivitySeconds,
    dropoff: context.dropoff,
  });
}

function newContext(input: SessionInput): SessionContext {
  return {
    ...newSessionRecord(input.sessionId, input.at),
    settings: input.settings,
    last_touched_at: input.at,
    idle_timer: armIdleTimer(input.at, input.settings.idleTtlMs),
    trigger: newTriggerMemory(),
    voice: NO_VOICE,
    voiceWork: NO_VOICE_WORK,
    reengagement: null,
    errors: newErrorWindow(),
    flow: null,
    popup_cooldown_until: null,
    dropoff: null,
    assistant_invocation_id: null,
    voice_silence: null,
  };
}

export function persistedContext(context: SessionContext): PersistedContext {
  const { settings: _settings, voiceWork: _voiceWork, ...kept } = context;
  return kept;
}

/**
 * A context brought back from the store. Its idle check keeps its original deadline (one already
 * past fires at once); the other timers are re-armed from their deadlines by `session.restore`,
 * since a persisted snapshot keeps no pending `after` timers.
 */
export function restoredContext(restored: PersistedContext, settings: SessionSettings, at: number): SessionContext {
  const deadline = idleTimerDeadline(restored.idle_timer);
  return {
    ...restored,
    schemas: internSchemas(restored.schemas),
    settings,
    voiceWork: NO_VOICE_WORK,
    idle_timer: { armed_at: at, delay_ms: Math.max(0, deadline - at) },
    voice_silence: restoredSilence(restored, settings, at),
  };
}

/**
 * The silence check of a restored session keeps its deadline (one already past checks at once).
 * A session stored with voice running before the check existed gets one from the restore.
 */
function restoredSilence(restored: PersistedContext, settings: SessionSettings, at: number): VoiceSilence | null {
  const silence = restored.voice_silence;
  if (silence) return { ...silence, armed_at: at, delay_ms: Math.max(0, idleTimerDeadline(silence) - at) };
  const voiceRan = restored.voice.started_at !== null && restored.voice.stopped_at === null;
  return voiceRan ? { armed_at: at, delay_ms: settings.voiceSilenceMs, alive_at: at, trace: RESTORED_TRACE } : null;
}

type HoldBack = 'assistant_active' | 'cooldown' | null;


type Evaluation = Omit<TriggerEvaluateCommand, 'type' | 'reply'>;

/** The session's error window for the evaluated screen, as it stands at the evaluation's time. */
function currentErrors(context: SessionContext, screen: string | null | undefined, at: number, windowSeconds: number): ErrorWindow {
  return prune(onScreen(context.errors, screen), at, windowSeconds * 1000);
}

interface TriggerOutcome {
  decision: TriggerDecision;
  patch: Partial<SessionContext>;
  emitted: SessionEmitted[];
  cooldownMs: number;
}

/**
 * Decisions 4 in the session: the request's signals, its error codes counted together with the
 * failures the session holds for the screen (one failure reported both ways counts once), then
 * the suppressions.
 */
function decideTrigger(context: SessionContext, command: Evaluation, holdBack: HoldBack): TriggerOutcome {
  const { at } = command;
  const identity = { user_id: context.user_id ?? command.user_id, client_id: context.client_id ?? command.client_id };
  const clientId = identity.client_id ?? command.header_client_id;
  const config = mergeSdkConfig(command.sdk_overrides, clientId);
  const screen = command.signals.screen ?? context.screen ?? undefined;
  const signals = { ...command.signals, screen };
  let errors = withRequestCodes(currentErrors(context, screen, at, config.thresholds.error_window_seconds), command.signals.errors ?? [], at);
  const matched = evaluateTriggerPolicy({ ...signals, errors: heldCodes(errors) }, { config, criticalSteps: context.settings.criticalSteps, schemas: context.schemas });
  const decision = suppressTrigger(matched, {
    assistantActive: holdBack === 'assistant_active',
    cooldownRemainingMs: holdBack === 'cooldown' ? (context.trigger.cooldown_until ?? at) - at : undefined,
    alreadyPrompted: !config.features.allow_multiple_assistant_prompt && wasPrompted(context.trigger, screen),
  });
  const patch: Partial<SessionContext> = { ...identity, updated_at: at };
  const emitted: SessionEmitted[] = [];
  let cooldownMs = 0;
  if (decision.trigger) {
    cooldownMs = config.thresholds.min_trigger_interval_seconds * 1000;
    const trigger = rememberPrompt(context.trigger, screen, at, cooldownMs);
    errors = restartAfterTrigger(errors, at, trigger.cooldown_until);
    Object.assign(patch, { last_trigger_at: at, trigger });
    emitted.push({
      type: 'command',
      command: { command: 'suggest_start_voice_agent', session_id: context.session_id, payload: { reason: decision.reason, intervention_mode: 'offer' } },
    });
  }
  patch.errors = errors;
  const payload = { ...triggerActivityPayload(signals, decision, clientId), held_failures: errors.failures.length };
  emitted.unshift(activity({ ...context, user_id: identity.user_id }, 'trigger', at, command.trace, payload));
  return { decision, patch, emitted, cooldownMs };
}

interface PopupOutcome {
  decision: PopupDecision;
  patch: Partial<SessionContext>;
  emitted: SessionEmitted[];
}

/** The popup decision of the session machine: never during voice, at most one per cooldown. */
function decidePopup(
  context: SessionContext,
  command: Evaluation & PopupInputs,
  voiceActive: boolean,
  voiceOffered: boolean,
): PopupOutcome {
  const { at } = command;
  const clientId = context.client_id ?? command.client_id ?? command.header_client_id;
  const config = mergeSdkConfig(command.sdk_overrides, clientId);
  const screen = command.signals.screen ?? context.screen ?? null;
  let decision: PopupDecision;
  let patch: Partial<SessionContext> = {};
  const emitted: SessionEmitted[] = [];
  if (!command.popups_enabled) decision = hiddenPopup('disabled');
  else if (voiceActive) decision = hiddenPopup('assistant_active');
  else if (voiceOffered) decision = hiddenPopup('voice_offered');
  else {
    const errors = currentErrors(context, screen, at, config.thresholds.error_window_seconds);
    const idleSince = context.last_user_activity_at ?? context.created_at;
    const candidate = popupFor({
      now: at,
      screen,
      errors,
      idleSeconds: command.signals.idle_seconds ?? Math.max(0, (at - idleSince) / 1000),
      criticalSteps: context.settings.criticalSteps,
      schemas: context.schemas,
      knowledgeBase: command.knowledge_base,
    });
    const cooling = context.popup_cooldown_until !== null && at < context.popup_cooldown_until;
    if (candidate.show && cooling) {
      decision = { ...hiddenPopup('cooldown'), retry_after_seconds: Math.max(1, Math.ceil((context.popup_cooldown_until! - at) / 1000)) };
    } else {
      decision = candidate;
    }
    if (decision.show) {
      patch = { popup_cooldown_until: at + config.thresholds.assistant_prompt_cooldown_seconds * 1000, updated_at: at };
      emitted.push({
        type: 'command',
        command: { command: 'show_popup', session_id: context.session_id, payload: { message: decision.message!, delay_ms: decision.delay_ms, reason: decision.popup_reason_code } },
      });
    }
  }
  emitted.unshift(activity(context, 'popup_evaluate', at, command.trace, { screen, decision: { ...decision }, client_id: clientId }));
  return { decision, patch, emitted };
}

export type SessionIngest = Extract<SessionCommand, { type: 'session.ingest' }>;

/** What an SDK event does to a session: its next context, what it emits, and the answer. */
export interface IngestStep {
  context: SessionContext;
  emitted: Extract<SessionEmitted, { type: 'activity' | 'agent.notice' }>[];
  /** The event came from the user, not agent telemetry: an armed reengagement timer restarts. */
  userActivity: boolean;
  result: IngestResult;
}

/** Spec 4.1 in the session: the event applied, the error window moved on, the activity items. */
export function ingestStep(context: SessionContext, event: SessionIngest): IngestStep {
  const outcome = eventPatch(context, event.event, { at: event.at, schemaRegistry: context.settings.schemaRegistry, matchHint: event.matchHint, maxBytes: context.settings.sessionMaxBytes, sizes: event.sizes });
  const userActivity = !AGENT_EVENT_TYPES.has(outcome.stored.event);
  // The user coming back cancels a registered drop-off.
  const returned = userActivity && context.dropoff !== null;
  // One copy of the context with the event's fields; a patch of only those fields measured
  // worse: XState's assign merges it into its own copy on a slow path (BENCHMARKS.md).
  const next: SessionContext = {
    ...context,
    ...outcome.patch,
    last_touched_at: event.at,
    errors: afterEvent(context.errors, outcome.stored, outcome.patch.screen, event.at, event.channel),
  };
  // The agent's telemetry is a sign the call is alive.
  if (!userActivity && context.voice_silence) next.voice_silence = { ...context.voice_silence, alive_at: event.at };
  if (returned) next.dropoff = null;
  const item = (kind: ActivityKind, payload: Record<string, unknown>): IngestStep['emitted'][number] => ({
    type: 'activity',
    draft: { at: event.at, session_id: context.session_id, user_id: outcome.patch.user_id, trace: event.trace, kind, payload },
  });
  const emitted = [item('event', eventActivityPayload(outcome.stored, outcome.warnings, event.channel))];
  if (returned) emitted.push(item('dropoff_cancelled', { by: 'user_returned' }));
  if (outcome.schemaPush) emitted.push(item('schema_push', { ...outcome.schemaPush }));
  // While a call runs, what the user types or fails on is what the agent should hear of now,
  // not at its next refresh (docs/decisions/0006-the-voice-agents-context.md). Placeholder media has no room to tell.
  if (context.settings.mediaReady && context.voice_silence && CONTEXT_PUSH_EVENTS.has(outcome.stored.event)) {
    emitted.push({ type: 'agent.notice', room: currentRoom(context), notice: { type: 'context_updated', session_id: context.session_id, reason: outcome.stored.event, at: event.at } });
  }
  return { context: next, emitted, userActivity, result: { ingested_at_ms: event.at, warnings: outcome.warnings } };
}

/** When the reengagement timer fires, while armed. */
export const reengagementDeadline = (context: PersistedContext & { settings: SessionSettings }, timer: ReengagementTimer): number =>
  timer.armed_at + context.settings.reengagementInactivitySeconds * 1000;

/**
 * One KYC user's session. Pure: time arrives on each command (`at`), timers are named
 * delays, media work is invoked promise actors provided at bootstrap, and everything the
 * world should know leaves as an emission.
 */
export const sessionMachine = setup({
  types: {
    context: {} as SessionContext,
    events: {} as SessionCommand | SessionRestore | TriggerFired | UserActivity | ReengagementArm | ReengagementCancel,
    emitted: {} as SessionEmitted,
    input: {} as SessionInput,
  },
  actors: {
    createRoom: fromPromise<void, RoomInput>(unprovided),
    findAgentDispatch: fromPromise<string | null, FindAgentInput>(unprovided),
    dispatchAgent: fromPromise<string, RoomInput>(unprovided),
    mintToken: fromPromise<IssuedToken, TokenInput>(unprovided),
    deleteRoom: fromPromise<void, RoomInput>(unprovided),
  },
  delays: {
    idleCheck: ({ context }) => context.idle_timer.delay_ms,
    voiceSilenceCheck: ({ context }) => context.voice_silence?.delay_ms ?? context.settings.voiceSilenceMs,
    // The tenant's min_trigger_interval_seconds at the moment the trigger fired; after a restore, what is left of it.
    triggerCooldown: ({ context, event }) => {
      if (event.type === 'trigger.fired') return event.cooldownMs;
      if (event.type === 'session.restore') return Math.max(0, (context.trigger.cooldown_until ?? event.at) - event.at);
      return 0;
    },
    reengagementInactivity: ({ context, event }) =>
      event.type === 'session.restore' && context.reengagement
        ? Math.max(0, reengagementDeadline(context, context.reengagement) - event.at)
        : context.settings.reengagementInactivitySeconds * 1000,
  },
  guards: {
    voiceInactive: stateIn({ voice: 'inactive' }),
    // Starting and stopping count as active: a prompt then would talk over an assistant coming or going.
    assistantActive: not(stateIn({ voice: 'inactive' })),
    triggerCoolingDown: stateIn({ trigger: 'cooldown' }),
    noReengagementArmed: stateIn({ reengagement: 'idle' }),
    idleForTtl: ({ context }) => idleForTtl(context.idle_timer, context.last_touched_at, context.settings.idleTtlMs),
    voiceSilent: ({ context }) => {
      const silence = context.voice_silence;
      return silence ? idleForTtl(silence, silence.alive_at, context.settings.voiceSilenceMs) : false;
    },
    mediaReady: ({ context }) => context.settings.mediaReady,
    dispatchRecorded: ({ context }) => context.voice.dispatch_id !== null,
    dispatchFound: (_, params: { dispatchId: string | null }) => params.dispatchId !== null,
    restoredVoiceActive: ({ event }) => event.type === 'session.restore' && event.voice === 'active',
    restoredCoolingDown: ({ context, event }) => event.type === 'session.restore' && (context.trigger.cooldown_until ?? 0) > event.at,
    restoredReengagement: ({ context, event }) => event.type === 'session.restore' && context.reengagement !== null,
  },
  actions: {
    // One action, one assign: each assign clones the machine snapshot, and an event is the
    // commonest command by far (BENCHMARKS.md has the measurement). `ingestStep` is the whole of
    // it; the session logic of the supervisor runs the same function directly (direct-ingest.ts).
    ingest: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'session.ingest') return;
      const step = ingestStep(context, event);
      // Given as a function, so XState takes the object as it is instead of copying it key by key.
      enqueue.assign(() => step.context);
      for (const emitted of step.emitted) enqueue.emit(emitted);
      // Only an armed reengagement timer listens; raising for nobody costs a whole microstep per event.
      if (step.userActivity && context.reengagement) enqueue.raise({ type: 'user.activity', at: event.at });
      const reply = event.reply;
      enqueue(() => reply(step.result));
    }),
    serveContext: enqueueActions(({ context, event, enqueue }, params: { voiceActive: boolean }) => {
      if (event.type !== 'context.fetch') return;
      const agentContext = buildAgentContext(context, params.voiceActive, event.sources);
      enqueue.emit({
        type: 'activity',
        draft: {
          kind: 'voice_agent_context_fetch',
          at: event.at,
          session_id: context.session_id,
          user_id: context.user_id,
          trace: event.trace,
          payload: { screen: context.screen, kb_step: agentContext.context.kyc_kb.step_id, prompt_chars: agentContext.system_prompt.length },
        },
      });
      const reply = event.reply;
      enqueue(() => reply(agentContext));
    }),
    evaluateTrigger: enqueueActions(({ context, event, enqueue }, params: { holdBack: HoldBack }) => {
      if (event.type !== 'trigger.evaluate') return;
      const outcome = decideTrigger(context, event, params.holdBack);
      enqueue.assign(outcome.patch);
      if (outcome.cooldownMs > 0) enqueue.raise({ type: 'trigger.fired', cooldownMs: outcome.cooldownMs });
      for (const emitted of outcome.emitted) enqueue.emit(emitted);
      const reply = event.reply;
      enqueue(() => reply(outcome.decision));
    }),
    evaluatePopup: enqueueActions(({ context, event, enqueue }, params: { holdBack: HoldBack }) => {
      if (event.type !== 'popup.evaluate') return;
      const outcome = decidePopup(context, event, params.holdBack === 'assistant_active', false);
      enqueue.assign(outcome.patch);
      for (const emitted of outcome.emitted) enqueue.emit(emitted);
      const reply = event.reply;
      enqueue(() => reply(outcome.decision));
    }),
    evaluateSurfaces: enqueueActions(({ context, event, enqueue }, params: { holdBack: HoldBack }) => {
      if (event.type !== 'assistant.evaluate') return;
      const trigger = decideTrigger(context, event, params.holdBack);
      // The popup sees the session as the trigger left it; an offer of voice is prompt enough.
      const popup = decidePopup({ ...context, ...trigger.patch }, event, params.holdBack === 'assistant_active', trigger.decision.trigger);
      enqueue.assign({ ...trigger.patch, ...popup.patch });
      if (trigger.cooldownMs > 0) enqueue.raise({ type: 'trigger.fired', cooldownMs: trigger.cooldownMs });
      for (const emitted of [...trigger.emitted, ...popup.emitted]) enqueue.emit(emitted);
      const reply = event.reply;
      enqueue(() => reply({ trigger: trigger.decision, popup: popup.decision }));
    }),
    setFlow: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'flow.set') return;
      const { at } = event;
      let flow: SessionFlow | null;
      if (event.step_sequence === null) flow = { flow_key: event.flow_key, steps: context.flow?.flow_key === event.flow_key ? context.flow.steps : [] };
      else flow = event.step_sequence.length === 0 ? null : { flow_key: event.flow_key, steps: flowSteps(event.step_sequence) };
      const screen = event.current_step ?? context.screen;
      enqueue.assign({
        flow,
        screen,
        screen_id: event.current_step ?? context.screen_id,
        errors: onScreen(context.errors, screen),
        user_id: context.user_id ?? event.user_id,
        client_id: context.client_id ?? event.client_id,
        updated_at: at,
      });
      const result = { flow, ...stepFacts(event.knowledge_base, screen), progress: flowProgress(flow, screen) };
      const reply = event.reply;
      enqueue(() => reply(result));
    }),
    registerDropoff: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'dropoff.register') return;
      const dropoff: Dropoff = { registered_at: event.at, has_dialable_phone: event.has_dialable_phone, phone_last4: event.phone_last4, reason: event.reason };
      enqueue.assign({ dropoff, user_id: context.user_id ?? event.user_id, updated_at: event.at });
      const { has_dialable_phone, phone_last4, reason } = dropoff;
      enqueue.emit(activity(context, 'dropoff_registered', event.at, event.trace, { has_dialable_phone, phone_last4, reason }));
      enqueue.raise({ type: 'reengagement.arm', at: event.at, trace: event.trace });
      const reply = event.reply;
      enqueue(() => reply({ registered: true, has_dialable_phone: dropoff.has_dialable_phone }));
    }),
    cancelDropoff: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'dropoff.cancel') return;
      const cancelled = context.dropoff !== null;
      if (cancelled) {
        enqueue.assign({ dropoff: null, updated_at: event.at });
        enqueue.emit(activity(context, 'dropoff_cancelled', event.at, event.trace, { by: 'client' }));
      }
      const reply = event.reply;
      enqueue(() => reply({ cancelled }));
    }),
    // A command only notes the time: restarting the idle timer on every command would cost a
    // microstep and a timer swap per event (see idle-timer.ts).
    touch: assign({ last_touched_at: ({ context, event }) => ('at' in event ? event.at : context.last_touched_at) }),
    rearmIdleTimer: assign({ idle_timer: ({ context }) => rearmIdleTimer(context.idle_timer, context.last_touched_at, context.settings.idleTtlMs) }),
    announceExpiry: emit(({ context }) => ({ type: 'session.expired' as const, sessionId: context.session_id })),

    beginStart: enqueueActions(({ context, event, enqueue }, params: { resumed: boolean }) => {
      if (event.type !== 'voice.start') return;
      const userId = event.user_id ?? context.user_id;
      const screen = event.screen ?? context.screen;
      const warnings: string[] = [];
      if (screen === null) warnings.push(VoiceWarning.missingScreenContext);
      if (!context.settings.mediaReady) warnings.push(VoiceWarning.mediaNotConfigured);
      enqueue.assign({
        user_id: userId,
        screen,
        screen_id: event.screen ?? context.screen_id,
        updated_at: event.at,
        voice: { ...context.voice, room: currentRoom(context) },
        voiceWork: {
          ...context.voiceWork,
          start: { command: event, resumed: params.resumed, identity: participantIdentity(userId, context.session_id), warnings, dispatchViaToken: false },
        },
        // A resume belongs to the engagement running; anything else begins a new one.
        assistant_invocation_id: params.resumed && context.assistant_invocation_id !== null ? context.assistant_invocation_id : event.invocation_id,
      });
    }),
    noteRoomCreateFailed: enqueueActions(({ context, enqueue }) => {
      const start = context.voiceWork.start!;
      const warnings = [...start.warnings, VoiceWarning.roomCreateFailed, VoiceWarning.dispatchViaToken];
      enqueue.assign({ voiceWork: { ...context.voiceWork, start: { ...start, warnings, dispatchViaToken: true } } });
    }),
    keepDispatch: enqueueActions(({ context, enqueue }, params: { dispatchId: string | null }) => {
      enqueue.assign({ voice: { ...context.voice, dispatch_id: params.dispatchId } });
    }),
    noteDispatchFailed: enqueueActions(({ context, enqueue }) => {
      const start = context.voiceWork.start!;
      enqueue.assign({
        voice: { ...context.voice, dispatch_id: null },
        voiceWork: { ...context.voiceWork, start: { ...start, warnings: [...start.warnings, VoiceWarning.dispatchFailed] } },
      });
    }),
    finishStart: enqueueActions(({ context, enqueue }, issued: IssuedToken) => {
      const { command, resumed, warnings } = context.voiceWork.start!;
      const room = currentRoom(context);
      const voice: VoiceDetails = {
        ...context.voice,
        started_at: resumed ? (context.voice.started_at ?? command.at) : command.at,
        stopped_at: resumed ? context.voice.stopped_at : null,
      };
      // A start or a resume is a sign of life: the silence check counts from it.
      const voice_silence: VoiceSilence = { armed_at: command.at, delay_ms: context.settings.voiceSilenceMs, alive_at: command.at, trace: command.trace };
      enqueue.assign({ voice, voiceWork: { ...context.voiceWork, start: null }, voice_silence });
      enqueue.emit(
        activity(context, 'session_start', command.at, command.trace, {
          room,
          resumed,
          screen: context.screen,
          dispatch_id: voice.dispatch_id,
          warnings,
          assistant_invocation_id: context.assistant_invocation_id,
        }),
      );
      const assistantInvocationId = context.assistant_invocation_id ?? command.invocation_id;
      enqueue(() =>
        command.reply({
          session_id: context.session_id,
          room,
          token: issued.token,
          media_url: issued.url,
          expires_in_sec: issued.expires_in_sec,
          warnings,
          resumed,
          assistant_invocation_id: assistantInvocationId,
        }),
      );
    }),

    beginStop: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'voice.stop') return;
      enqueue.assign({ voiceWork: { ...context.voiceWork, stop: { command: event, warnings: [] } } });
    }),
    noteVoiceAlive: enqueueActions(({ context, event, enqueue }) => {
      if (event.type === 'context.fetch' && context.voice_silence) enqueue.assign({ voice_silence: { ...context.voice_silence, alive_at: event.at } });
    }),
    rearmVoiceSilence: enqueueActions(({ context, enqueue }) => {
      const silence = context.voice_silence;
      if (silence) enqueue.assign({ voice_silence: { ...silence, ...rearmIdleTimer(silence, silence.alive_at, context.settings.voiceSilenceMs) } });
    }),
    /** No client stopped it, but nothing has been heard of the call for the timeout: it ends as a stop would. */
    beginExpiry: enqueueActions(({ context, enqueue }) => {
      const silence = context.voice_silence!;
      const at = idleTimerDeadline(silence);
      const command: VoiceStopCommand = { type: 'voice.stop', at, trace: silence.trace, sdk_overrides: {}, header_client_id: null, reply: () => undefined };
      const silentSeconds = Math.floor((at - silence.alive_at) / 1000);
      enqueue.assign({ voiceWork: { ...context.voiceWork, stop: { command, warnings: [], silentSeconds } } });
    }),
    noteRoomDeleteFailed: enqueueActions(({ context, enqueue }) => {
      const stop = context.voiceWork.stop!;
      enqueue.assign({ voiceWork: { ...context.voiceWork, stop: { ...stop, warnings: [...stop.warnings, VoiceWarning.roomDeleteFailed] } } });
    }),
    finishStop: enqueueActions(({ context, enqueue }) => {
      const { command, warnings, silentSeconds } = context.voiceWork.stop!;
      const voice: VoiceDetails = { ...context.voice, dispatch_id: null, stopped_at: command.at };
      enqueue.assign({ voice, voiceWork: { ...context.voiceWork, stop: null }, voice_silence: null });
      // The user just hung up: the failures the call was about are no reason to offer it again,
      // and the next offer waits min_trigger_interval_seconds, as after a fired trigger. A call
      // that went silent ended that long ago, past both: what happened since still counts.
      if (silentSeconds === undefined) {
        const config = mergeSdkConfig(command.sdk_overrides, context.client_id ?? command.header_client_id);
        const trigger = coolDownAfterVoice(context.trigger, command.at, config.thresholds.min_trigger_interval_seconds * 1000);
        enqueue.assign({ errors: clearedAfterVoice(context.errors), trigger });
        if (trigger !== context.trigger) enqueue.raise({ type: 'trigger.fired', cooldownMs: trigger.cooldown_until! - command.at });
      }
      const ended = silentSeconds === undefined ? {} : { ended_by: 'silence', silent_seconds: silentSeconds };
      enqueue.emit(activity(context, 'session_stop', command.at, command.trace, { room: voice.room, was_active: true, warnings, ...ended }));
      enqueue.emit(activity(context, 'reengagement', command.at, command.trace, { ...sessionReengagement(context, false, command.at), source: 'session_stop' }));
      enqueue.raise({ type: 'reengagement.arm', at: command.at, trace: command.trace });
      enqueue(() => command.reply({ session_id: context.session_id, active: false, was_active: true, warnings }));
    }),
    stopInactive: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'voice.stop') return;
      enqueue.emit(activity(context, 'session_stop', event.at, event.trace, { room: context.voice.room, was_active: false, warnings: [] }));
      enqueue(() => event.reply({ session_id: context.session_id, active: false, was_active: false, warnings: [] }));
    }),

    /** A voice command that arrives while media work runs waits its turn, or is refused when too many wait. */
    holdVoiceCommand: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'voice.start' && event.type !== 'voice.stop') return;
      if (context.voiceWork.waiting.length >= MAX_WAITING_VOICE_COMMANDS) {
        enqueue(() => event.reply({ busy: true }));
        return;
      }
      enqueue.assign({ voiceWork: { ...context.voiceWork, waiting: [...context.voiceWork.waiting, event] } });
    }),
    replayWaiting: enqueueActions(({ context, enqueue }) => {
      enqueue.assign({ voiceWork: { ...context.voiceWork, waiting: [] } });
      for (const command of context.voiceWork.waiting) enqueue.raise(command);
    }),

    armReengagement: enqueueActions(({ event, enqueue }) => {
      if (event.type === 'reengagement.arm') enqueue.assign({ reengagement: { armed_at: event.at, trace: event.trace } });
    }),
    rearmReengagement: enqueueActions(({ context, event, enqueue }) => {
      if (event.type === 'user.activity' && context.reengagement) enqueue.assign({ reengagement: { ...context.reengagement, armed_at: event.at } });
    }),
    recordReengagement: enqueueActions(({ context, enqueue }) => {
      const timer = context.reengagement;
      if (!timer) return;
      // The timer fires the full inactivity period after it was last armed: that is "now".
      const firedAt = reengagementDeadline(context, timer);
      enqueue.emit(activity(context, 'reengagement', firedAt, timer.trace, { ...sessionReengagement(context, false, firedAt), source: 'timer' }));
    }),
    clearReengagement: enqueueActions(({ enqueue }) => enqueue.assign({ reengagement: null })),
  },
}).createMachine({
  id: 'session',
  type: 'parallel',
  context: ({ input }) => (input.restored ? restoredContext(input.restored, input.settings, input.at) : newContext(input)),
  on: {
    'session.ingest': { actions: 'ingest' },
    'context.fetch': [
      { guard: 'voiceInactive', actions: [{ type: 'serveContext', params: { voiceActive: false } }, 'touch'] },
      { actions: [{ type: 'serveContext', params: { voiceActive: true } }, 'noteVoiceAlive', 'touch'] },
    ],
    // Suppressions that come from the state, in order of precedence; the action adds already_prompted.
    'trigger.evaluate': [
      { guard: 'assistantActive', actions: [{ type: 'evaluateTrigger', params: { holdBack: 'assistant_active' } }, 'touch'] },
      { guard: 'triggerCoolingDown', actions: [{ type: 'evaluateTrigger', params: { holdBack: 'cooldown' } }, 'touch'] },
      { actions: [{ type: 'evaluateTrigger', params: { holdBack: null } }, 'touch'] },
    ],
    'popup.evaluate': [
      { guard: 'assistantActive', actions: [{ type: 'evaluatePopup', params: { holdBack: 'assistant_active' } }, 'touch'] },
      { actions: [{ type: 'evaluatePopup', params: { holdBack: null } }, 'touch'] },
    ],
    'assistant.evaluate': [
      { guard: 'assistantActive', actions: [{ type: 'evaluateSurfaces', params: { holdBack: 'assistant_active' } }, 'touch'] },
      { guard: 'triggerCoolingDown', actions: [{ type: 'evaluateSurfaces', params: { holdBack: 'cooldown' } }, 'touch'] },
      { actions: [{ type: 'evaluateSurfaces', params: { holdBack: null } }, 'touch'] },
    ],
    'flow.set': { actions: ['setFlow', 'touch'] },
    'dropoff.register': { actions: ['registerDropoff', 'touch'] },
    'dropoff.cancel': { actions: ['cancelDropoff', 'touch'] },
  },
  states: {
    voice: {
      initial: 'inactive',
      states: {
        inactive: {
          on: {
            'voice.start': {
              target: 'starting',
              actions: [{ type: 'beginStart', params: { resumed: false } }, 'touch', raise({ type: 'reengagement.cancel' })],
            },
            'voice.stop': { actions: ['stopInactive', 'touch'] },
            'session.restore': { guard: 'restoredVoiceActive', target: 'active' },
          },
        },
        starting: {
          initial: 'planning',
          on: { 'voice.start': { actions: ['holdVoiceCommand', 'touch'] }, 'voice.stop': { actions: ['holdVoiceCommand', 'touch'] } },
          states: {
            planning: {
              always: [{ guard: 'mediaReady', target: 'creatingRoom' }, { target: 'mintingToken' }],
            },
            creatingRoom: {
              invoke: {
                src: 'createRoom',
                input: roomInput,
                onDone: { target: 'findingAgent' },
                // No dispatch call: the token carries the dispatch, and the media server honours
                // it only when the user's join creates the room.
                onError: { target: 'mintingToken', actions: 'noteRoomCreateFailed' },
              },
            },
            findingAgent: {
              // Listing first is what keeps one agent per room: a dispatch that succeeded behind a
              // timeout, or one from before a restart, is adopted rather than doubled.
              invoke: {
                src: 'findAgentDispatch',
                input: ({ context }) => ({ room: currentRoom(context), preferredId: context.voice.dispatch_id }),
                onDone: [
                  {
                    guard: { type: 'dispatchFound', params: ({ event }) => ({ dispatchId: event.output }) },
                    target: 'mintingToken',
                    actions: { type: 'keepDispatch', params: ({ event }) => ({ dispatchId: event.output }) },
                  },
                  { target: 'dispatchingAgent' },
                ],
                // Unknown whether an agent is there: dispatching could make two.
                onError: [{ guard: 'dispatchRecorded', target: 'mintingToken' }, { target: 'mintingToken', actions: 'noteDispatchFailed' }],
              },
            },
            dispatchingAgent: {
              invoke: {
                src: 'dispatchAgent',
                input: roomInput,
                onDone: { target: 'mintingToken', actions: { type: 'keepDispatch', params: ({ event }) => ({ dispatchId: event.output }) } },
                onError: { target: 'mintingToken', actions: 'noteDispatchFailed' },
              },
            },
            mintingToken: {
              // Minting is local and cannot fail for a media reason; a failure is a bug, which
              // the supervisor contains (500, session discarded), hence no onError.
              invoke: {
                src: 'mintToken',
                input: ({ context }) => {
                  const start = context.voiceWork.start!;
                  return { room: currentRoom(context), identity: start.identity, sessionId: context.session_id, dispatchAgent: start.dispatchViaToken };
                },
                onDone: { target: '#session.voice.active', actions: [{ type: 'finishStart', params: ({ event }) => event.output }, 'replayWaiting'] },
              },
            },
          },
        },
        active: {
          on: {
            'voice.start': { target: 'starting', actions: [{ type: 'beginStart', params: { resumed: true } }, 'touch'] },
            'voice.stop': { target: 'stopping', actions: ['beginStop', 'touch'] },
          },
          // A stop the client never sent (lost, or the app killed) must not hold the session in
          // voice for ever: triggers held back as assistant_active, and never evicted.
          after: {
            voiceSilenceCheck: [
              { guard: 'voiceSilent', target: 'stopping', actions: 'beginExpiry' },
              { target: 'active', reenter: true, actions: 'rearmVoiceSilence' },
            ],
          },
        },
        stopping: {
          initial: 'planning',
          on: { 'voice.start': { actions: ['holdVoiceCommand', 'touch'] }, 'voice.stop': { actions: ['holdVoiceCommand', 'touch'] } },
          states: {
            planning: {
              always: [{ guard: 'mediaReady', target: 'deletingRoom' }, { target: 'done' }],
            },
            deletingRoom: {
              invoke: {
                src: 'deleteRoom',
                input: roomInput,
                onDone: { target: 'done' },
                onError: { target: 'done', actions: 'noteRoomDeleteFailed' },
              },
            },
            done: { type: 'final' },
          },
          onDone: { target: 'inactive', actions: ['finishStop', 'replayWaiting'] },
        },
      },
    },
    trigger: {
      initial: 'ready',
      states: {
        ready: { on: { 'trigger.fired': 'cooldown', 'session.restore': { guard: 'restoredCoolingDown', target: 'cooldown' } } },
        // A voice session's end while cooling down starts the cooldown again, from the stop.
        cooldown: { after: { triggerCooldown: 'ready' }, on: { 'trigger.fired': { target: 'cooldown', reenter: true } } },
      },
    },
    presence: {
      initial: 'live',
      states: {
        live: {
          after: {
            idleCheck: [
              // A reengagement still to come keeps the session (after a restart both can be due
              // at once, and the idle check, armed first, would drop the reengagement unrecorded).
              { guard: and(['voiceInactive', 'noReengagementArmed', 'idleForTtl']), target: 'expired' },
              // Re-entering only `live` (a transition declared on the state, not on the region: a
              // re-entering transition on a region re-enters the whole parallel machine).
              { target: 'live', reenter: true, actions: 'rearmIdleTimer' },
            ],
          },
        },
        expired: { entry: 'announceExpiry' },
      },
    },
    reengagement: {
      initial: 'idle',
      states: {
        idle: {
          on: {
            'reengagement.arm': { target: 'armed', actions: 'armReengagement' },
            'session.restore': { guard: 'restoredReengagement', target: 'armed' },
          },
        },
        armed: {
          on: {
            'reengagement.arm': { target: 'armed', reenter: true, actions: 'armReengagement' },
            'user.activity': { target: 'armed', reenter: true, actions: 'rearmReengagement' },
            'reengagement.cancel': { target: 'idle', actions: 'clearReengagement' },
          },
          after: {
            reengagementInactivity: { target: 'idle', actions: ['recordReengagement', 'clearReengagement'] },
          },
        },
      },
    },
  },
});

export type SessionMachine = typeof sessionMachine;
export type SessionSnapshot = SnapshotFrom<SessionMachine>;

/**
 * The one state a session may hibernate in: no voice work, no cooldown, no reengagement timer,
 * hence no timer but the idle check, which its context can re-arm. It is also the initial state,
 * so a session brought back from its context alone is where it was.
 */
export const HIBERNATION_STATE = { voice: 'inactive', trigger: 'ready', presence: 'live', reengagement: 'idle' } as const;

export function canHibernate(snapshot: SessionSnapshot): boolean {
  return snapshot.status === 'active' && snapshot.matches(HIBERNATION_STATE);
}

/** Whether a session state value has voice running (starting and stopping count: media is in play). */
export function isVoiceActive(value: unknown): boolean {
  const voice = (value as { voice?: unknown } | null)?.voice;
  return voice !== undefined && voice !== 'inactive';
}
