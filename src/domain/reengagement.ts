import type { Dropoff } from './dropoff.js';

/** Whether to reach out to a user again after a voice session (docs/decisions/0003-reengagement.md), as a pure function. */
export interface ReengagementFacts {
  now: number;
  /** Last SDK event other than agent telemetry; the session's creation when there was none. */
  lastUserActivityAt: number;
  voiceActive: boolean;
  hadVoiceSession: boolean;
  inactivityThresholdSeconds: number;
  /** A drop-off the SDK registered and nobody cancelled: reason enough to reach out, by phone when dialable. */
  dropoff?: Dropoff | null | undefined;
  /** The agent gave up waiting for a person (`handoff_unanswered`): a call back is owed, at once, whatever the user does since. */
  callbackOwedAt?: number | null | undefined;
}

export interface Reengagement {
  recommended: boolean;
  channel: 'voice' | 'phone';
  reason: string;
  inactivity_seconds: number;
}

export function evaluateReengagement(facts: ReengagementFacts): Reengagement {
  const inactivitySeconds = Math.max(0, Math.floor((facts.now - facts.lastUserActivityAt) / 1000));
  const dropoff = facts.dropoff ?? null;
  const channel = dropoff?.has_dialable_phone ? 'phone' : 'voice';
  if (!facts.voiceActive && facts.callbackOwedAt)
    return { recommended: true, channel, reason: 'handoff_unanswered', inactivity_seconds: inactivitySeconds };
  const recommended =
    !facts.voiceActive &&
    (facts.hadVoiceSession || dropoff !== null) &&
    inactivitySeconds >= facts.inactivityThresholdSeconds;
  let reason: string;
  if (recommended) reason = `user_inactive_${Math.floor(inactivitySeconds / 60)}min`;
  else reason = facts.voiceActive ? 'assistant_active' : 'user_active';
  return { recommended, channel, reason, inactivity_seconds: inactivitySeconds };
}
