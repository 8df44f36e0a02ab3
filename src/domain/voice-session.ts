/**
 * The voice details of a session record (docs/decisions/0001-identity-values-masked-on-arrival.md) and the naming rules of a voice session.
 * Times are epoch milliseconds from the injected clock.
 */
import { MAX_TIMER_SECONDS } from './timer-limit.js';

export interface VoiceDetails {
  /** `{MEDIA_ROOM_PREFIX}-{session_id}`, once a start has been asked for. */
  room: string | null;
  /** The agent dispatch this session knows is in its room; null when none is confirmed. */
  dispatch_id: string | null;
  started_at: number | null;
  stopped_at: number | null;
}

export const NO_VOICE: VoiceDetails = { room: null, dispatch_id: null, started_at: null, stopped_at: null };

/** What a start or stop could not do as asked; carried by the response and the activity. */
export const VoiceWarning = {
  missingScreenContext: 'missing_screen_context',
  mediaNotConfigured: 'media_not_configured',
  roomCreateFailed: 'media_room_create_failed',
  dispatchViaToken: 'agent_dispatch_via_token',
  dispatchFailed: 'agent_dispatch_failed',
  roomDeleteFailed: 'media_room_delete_failed',
  /** A resume found no agent in the room (gone, or never joined): the old dispatch was replaced. */
  agentRedispatched: 'agent_redispatched',
} as const;

export type VoiceWarning = (typeof VoiceWarning)[keyof typeof VoiceWarning];

/**
 * How a voice session ended when no client stopped it: nothing heard of it for the silence
 * timeout, no agent joined after every dispatch allowed, or its room was gone from the media
 * server (docs/decisions/0032-an-agent-joins-or-the-call-ends.md).
 */
export type VoiceEndedBy = 'silence' | 'no_agent' | 'media_lost';

/** What the room of a call holds, as the media server lists it. */
export type AgentPresence = 'present' | 'absent' | 'room_gone';

/** VOICE_AGENT_JOIN_SECONDS when unset: how long a dispatched agent has to join the room. */
export const DEFAULT_VOICE_AGENT_JOIN_SECONDS = 10;
/** VOICE_AGENT_DISPATCH_ATTEMPTS when unset: dispatches per call (the first included) before it ends with `no_agent`. */
export const DEFAULT_VOICE_AGENT_DISPATCH_ATTEMPTS = 3;
/**
 * How long the `attempt`th dispatch of a call (the first is 1) has to join: the join time once
 * more per attempt, so a worker slow to start a job (a busy machine takes seconds) is given the
 * time a slow start takes instead of being replaced before it arrives
 * (docs/decisions/0032-an-agent-joins-or-the-call-ends.md). Bounded by what a timer can wait.
 */
export const agentJoinWindowMs = (joinMs: number, attempt: number): number =>
  Math.min(joinMs * Math.max(1, attempt), MAX_TIMER_SECONDS * 1000);
/** VOICE_ROOM_CHECK_SECONDS when unset: how often a call whose agent joined checks that its room and agent are still there. */
export const DEFAULT_VOICE_ROOM_CHECK_SECONDS = 30;

/** VOICE_SILENCE_TIMEOUT_SECONDS when unset: an active voice session not heard from this long ends. */
export const DEFAULT_VOICE_SILENCE_TIMEOUT_SECONDS = 300;

/** The media calls one voice start can make: create the room, look for the agent's dispatch, dispatch it. */
export const MEDIA_CALLS_PER_START = 3;

export const roomName = (prefix: string, sessionId: string): string => `${prefix}-${sessionId}`;

/** The identity an operator joins a call's room with: the agent (agent/handoff.ts) and the room check know an operator by it. */
export const OPERATOR_IDENTITY_PREFIX = 'operator-';

/** The participant identity (token `sub`): the user when known, else one derived from the session. */
export const participantIdentity = (userId: string | null, sessionId: string): string => userId ?? `user-${sessionId}`;
