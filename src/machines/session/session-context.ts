/**
 * The session actor's context and the types around it: what a session holds, the settings it is
 * started with, and the events the machine raises to itself. One place, so the machine, its
 * decisions, the ingest step and persistence all read the same shape.
 */
import type { ActivityKind, ActivityDraft, Trace } from '../../domain/activity.js';
import type { Dropoff } from '../../domain/dropoff.js';
import type { ErrorWindow } from '../../domain/error-window.js';
import { newErrorWindow } from '../../domain/error-window.js';
import type { SessionFlow } from '../../domain/flow.js';
import type { IdleTimer } from '../../domain/idle-timer.js';
import { armIdleTimer } from '../../domain/idle-timer.js';
import type { SessionRecord } from '../../domain/session-record.js';
import { newSessionRecord } from '../../domain/session-record.js';
import type { TriggerMemory } from '../../domain/trigger-suppression.js';
import { newTriggerMemory } from '../../domain/trigger-suppression.js';
import type { VoiceDetails, VoiceEndedBy } from '../../domain/voice-session.js';
import { NO_VOICE, roomName } from '../../domain/voice-session.js';
import type {
  SessionCommand,
  SessionEmitted,
  VoiceCommand,
  VoiceStartCommand,
  VoiceStopCommand,
} from './machine-events.js';

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
  /** VOICE_AGENT_JOIN_SECONDS in milliseconds: a dispatched agent not in the room by then is dispatched again. */
  agentJoinMs: number;
  /** VOICE_AGENT_DISPATCH_ATTEMPTS: dispatches per call before it ends with `no_agent`. */
  agentDispatchAttempts: number;
  /** VOICE_ROOM_CHECK_SECONDS in milliseconds: how often a call with its agent checks they are still there. */
  roomCheckMs: number;
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

/**
 * Sent by the host when the session's idle check is due (`idle_timer`'s deadline): the residency's
 * one sweep in process, the invocation in cluster mode. A delayed event would cost every running
 * session an XState timer of its own (docs/decisions/0043-the-idle-check-sent-by-the-host.md).
 */
export interface SessionIdleCheck {
  type: 'session.idle_check';
  at: number;
}

/** A start being carried out: the command it answers and what degraded so far. */
export interface StartWork {
  command: VoiceStartCommand;
  resumed: boolean;
  identity: string;
  warnings: string[];
  /** The room could not be created, so the token carries the agent dispatch. */
  dispatchViaToken: boolean;
  /** A resume found no agent and replaced the dispatch. */
  redispatched?: boolean;
}

export interface StopWork {
  command: VoiceStopCommand;
  warnings: string[];
  /** Ended by the silence check, not by a client: seconds since the call was last heard from. */
  silentSeconds?: number;
  /** Ended by the service, not by a client: why (absent for a client's stop). */
  endedBy?: VoiceEndedBy;
}

/** Replies wait here while media calls run; never shown, and gone once answered. */
export interface VoiceWork {
  start: StartWork | null;
  stop: StopWork | null;
  /** Voice commands that arrived while starting or stopping, replayed in order once settled. */
  waiting: VoiceCommand[];
}

export interface ReengagementTimer {
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

/**
 * While voice is active with media: the agent's dispatch and whether it joined
 * (docs/decisions/0032-an-agent-joins-or-the-call-ends.md). `attempts` counts this call's
 * dispatches, the first included; `joined_at` is when the agent was first seen in the room.
 */
export interface AgentWatch {
  dispatched_at: number;
  attempts: number;
  joined_at: number | null;
  /** The room could not be created, so the token carries the dispatch: no room until the user joins. */
  via_token: boolean;
  /** When the next check of the room is due. */
  due_at: number;
  /** Room checks in a row that the media server did not answer. */
  unanswered: number;
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
  /** Armed while voice is active with media; absent in sessions stored before it. */
  agent_watch?: AgentWatch | null;
}

/** Internal: a trigger fired, so the trigger region cools down for `cooldownMs`. */
export type TriggerFired = { type: 'trigger.fired'; cooldownMs: number };

/** Internal: an SDK event from the user (not agent telemetry) arrived. */
export type UserActivity = { type: 'user.activity'; at: number };
export type ReengagementArm = { type: 'reengagement.arm'; at: number; trace: Trace };
export type ReengagementCancel = { type: 'reengagement.cancel' };
/** Internal: a start settled with media (watch the agent join) or the call stopped (stop watching). */
export type AgentWatchEvent = { type: 'agent.watch'; at: number } | { type: 'agent.unwatch' } | AgentHeard;
/** Internal: the agent fetched its context while the watch awaited it, which it does only once in the room (agent/job.ts). */
export type AgentHeard = { type: 'agent.heard'; at: number };
/** Internal: the agent watch found the call cannot go on; the voice region ends it as a stop would. */
export type VoiceEnd = { type: 'voice.end'; endedBy: Exclude<VoiceEndedBy, 'silence'>; at: number };

/** Every event the session machine takes: the commands sent to it and those it raises itself. */
export type SessionMachineEvent =
  | SessionCommand
  | SessionRestore
  | SessionIdleCheck
  | TriggerFired
  | UserActivity
  | ReengagementArm
  | ReengagementCancel
  | AgentWatchEvent
  | VoiceEnd;

/** Shared by every session with no voice work under way: updates replace it, never mutate it. */
export const NO_VOICE_WORK: VoiceWork = Object.freeze({
  start: null,
  stop: null,
  waiting: Object.freeze([]) as unknown as VoiceCommand[],
});

/** An activity item; `dueAt` when a timer records it: the item says when it was due (docs/explanation/activity-actor.md). */
export const activity = (
  context: SessionContext,
  kind: ActivityKind,
  at: number,
  trace: Trace,
  payload: Record<string, unknown>,
  dueAt?: number,
): SessionEmitted => ({
  type: 'activity',
  draft:
    dueAt === undefined
      ? ({ kind, at, session_id: context.session_id, user_id: context.user_id, trace, payload } satisfies ActivityDraft)
      : ({
          kind,
          at,
          due_at: dueAt,
          session_id: context.session_id,
          user_id: context.user_id,
          trace,
          payload,
        } satisfies ActivityDraft),
});

export const currentRoom = (context: SessionContext): string =>
  roomName(context.settings.mediaRoomPrefix, context.session_id);

export function newContext(input: SessionInput): SessionContext {
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
    agent_watch: null,
  };
}

/** When the reengagement timer fires, while armed. */
export const reengagementDeadline = (
  context: PersistedContext & { settings: SessionSettings },
  timer: ReengagementTimer,
): number => timer.armed_at + context.settings.reengagementInactivitySeconds * 1000;
