import type { StateValue, StateValueMap } from 'xstate';
import { armIdleTimer, idleTimerDeadline } from '../domain/idle-timer.js';
import type { PersistedContext, SessionContext, SessionSettings } from '../machines/session/session-context.js';
import type { SessionSnapshot } from '../machines/session/machine.js';
import { persistedContext, restoredContext } from '../machines/session/persistence.js';
import { reengagementDeadline } from '../machines/session/session-context.js';
import type { StoredSession } from '../store/ports.js';

const voiceOf = (value: unknown): string => {
  const voice = (value as { voice?: unknown } | null)?.voice;
  return typeof voice === 'string'
    ? voice
    : typeof voice === 'object' && voice !== null
      ? Object.keys(voice)[0]!
      : 'inactive';
};

/**
 * A session as the store keeps it. A running session keeps its idle check as armed (its deadline
 * moves only when the check fires, so saving on every event does not move it); one going to
 * hibernate keeps its true idle deadline (last touch + TTL), so it is woken only to be evicted.
 */
export function toStored(snapshot: SessionSnapshot, hibernating = false): StoredSession {
  const { context, value } = snapshot;
  const idleTimer = hibernating
    ? armIdleTimer(context.last_touched_at, context.settings.idleTtlMs)
    : context.idle_timer;
  const coolingDown = snapshot.matches({ trigger: 'cooldown' }) && context.trigger.cooldown_until !== null;
  let wakeAt = idleTimerDeadline(idleTimer);
  if (coolingDown) wakeAt = Math.min(wakeAt, context.trigger.cooldown_until!);
  if (context.reengagement) wakeAt = Math.min(wakeAt, reengagementDeadline(context, context.reengagement));
  // A call's silence check is due then: a session brought back after a restart must be awake for it.
  if (context.voice_silence && voiceOf(value) !== 'inactive')
    wakeAt = Math.min(wakeAt, idleTimerDeadline(context.voice_silence));
  // So is its agent watch's next check (docs/decisions/0032-an-agent-joins-or-the-call-ends.md).
  if (context.agent_watch && voiceOf(value) !== 'inactive') wakeAt = Math.min(wakeAt, context.agent_watch.due_at);
  // persistedContext's copy is this call's own: one copy of the context per save, not two.
  const kept: PersistedContext = persistedContext(context);
  kept.idle_timer = idleTimer;
  return {
    session_id: context.session_id,
    value,
    context: kept,
    wake_at: wakeAt,
    summary: {
      user_id: context.user_id,
      screen: context.screen,
      voice: voiceOf(value),
      cooldown_until: coolingDown ? context.trigger.cooldown_until : null,
      created_at: context.created_at,
      last_activity_at: context.last_touched_at,
    },
  };
}

/**
 * Where a stored session's voice region resumes. A start under way at the crash was never
 * answered: the session comes back inactive, keeping the room and any dispatch it knew, and the
 * client's retry lists the room's dispatches before dispatching, so it adopts the agent already
 * there. A stop under way was never answered either: the session is still active and the retry
 * stops it.
 */
export function restoredVoice(stored: StoredSession): 'inactive' | 'active' {
  const voice = stored.summary.voice;
  return voice === 'active' || voice === 'stopping' ? 'active' : 'inactive';
}

export const storedContext = (stored: StoredSession): PersistedContext => stored.context as unknown as PersistedContext;

/** A read-only view of a session that is only in the store: its context and the state value it would resume in. */
export function storedView(
  stored: StoredSession,
  settings: SessionSettings,
  at: number,
): { context: SessionContext; value: StateValue } {
  const context = restoredContext(storedContext(stored), settings, at);
  // Kept as the machine's snapshot gave it (toStored): a state value, each region named.
  const value = stored.value as StateValueMap;
  const coolingDown = (context.trigger.cooldown_until ?? 0) > at;
  return {
    context,
    value: {
      ...value,
      voice: restoredVoice(stored),
      trigger: coolingDown ? 'cooldown' : 'ready',
      presence: 'live',
      reengagement: context.reengagement ? 'armed' : 'idle',
      agent: agentState(context, restoredVoice(stored)),
    },
  };
}

/** The agent region a stored session resumes in: awaiting or joined while voice runs with a watch. */
function agentState(context: SessionContext, voice: 'inactive' | 'active'): 'idle' | 'awaiting' | 'joined' {
  if (voice !== 'active' || !context.agent_watch) return 'idle';
  return context.agent_watch.joined_at === null ? 'awaiting' : 'joined';
}

/** A stored session with nothing under way: its only deadline is its idle eviction. */
export function isQuiescent(stored: StoredSession, at: number): boolean {
  const context = storedContext(stored);
  return (
    restoredVoice(stored) === 'inactive' && (context.trigger.cooldown_until ?? 0) <= at && context.reengagement === null
  );
}
