/**
 * A session to and from the store, and the one rule of when it may leave memory: what of the
 * context is kept, how a kept context comes back with its timers re-armed, and the state a session
 * must be in to hibernate.
 */
import type { Trace } from '../../domain/activity.js';
import { idleTimerDeadline } from '../../domain/idle-timer.js';
import { internSchemas } from '../../domain/schema-interning.js';
import type { PersistedContext, SessionContext, SessionSettings, VoiceSilence } from './session-context.js';
import { NO_VOICE_WORK } from './session-context.js';

/** The trace of an expiry for a session stored before the silence check kept its start's. */
const RESTORED_TRACE: Trace = Object.freeze({ trace_id: 'restored', request_id: 'restored' });

export function persistedContext(context: SessionContext): PersistedContext {
  const { settings: _settings, voiceWork: _voiceWork, ...kept } = context;
  return kept;
}

/**
 * A context brought back from the store. Its idle check keeps its original deadline (one already
 * past is sent at once, presence.ts); the other timers are re-armed from their deadlines by
 * `session.restore`, since a persisted snapshot keeps no pending `after` timers.
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

/**
 * The one state a session may hibernate in: no voice work, no cooldown, no reengagement timer,
 * hence no timer but the idle check, which its context can re-arm. It is also the initial state,
 * so a session brought back from its context alone is where it was.
 */
export const HIBERNATION_STATE = {
  voice: 'inactive',
  trigger: 'ready',
  presence: 'live',
  reengagement: 'idle',
  agent: 'idle',
} as const;

/** Whether a running session is in `HIBERNATION_STATE` (typed by what it reads, so persistence needs not the machine). */
export function canHibernate(snapshot: { status: string; matches(state: typeof HIBERNATION_STATE): boolean }): boolean {
  return snapshot.status === 'active' && snapshot.matches(HIBERNATION_STATE);
}

/**
 * Whether a session may leave memory for the store when the memory budget needs its room, though
 * something is under way in it: voice active or inactive with no media call running and no voice
 * command waiting, whatever its cooldown or reengagement timer. `session.restore` brings each of
 * these back as it was, its timers re-armed from the deadlines kept, as after a restart; a session
 * starting or stopping voice holds replies that only its actor can give, and stays.
 */
export function canLeaveMemory(snapshot: {
  status: string;
  context: Pick<SessionContext, 'voiceWork'>;
  matches(
    state:
      { presence: 'live' } | { voice: 'inactive' | 'active' } | { agent: 'checking' | 'rechecking' | 'redispatching' },
  ): boolean;
}): boolean {
  if (snapshot.status !== 'active' || !snapshot.matches({ presence: 'live' })) return false;
  // A room check or a dispatch under way is a media call only the actor can see through.
  if (
    snapshot.matches({ agent: 'checking' }) ||
    snapshot.matches({ agent: 'rechecking' }) ||
    snapshot.matches({ agent: 'redispatching' })
  )
    return false;
  const { start, stop, waiting } = snapshot.context.voiceWork;
  if (start !== null || stop !== null || waiting.length > 0) return false;
  return snapshot.matches({ voice: 'inactive' }) || snapshot.matches({ voice: 'active' });
}
