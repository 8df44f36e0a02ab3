/**
 * The reengagement rule as the session applies it: whether to reach out to a user who went quiet,
 * and when the session's reengagement timer is due.
 */
import type { Reengagement } from '../../domain/reengagement.js';
import { evaluateReengagement } from '../../domain/reengagement.js';
import type { PersistedContext, ReengagementTimer, SessionContext, SessionSettings } from './context.js';

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

/** When the reengagement timer fires, while armed. */
export const reengagementDeadline = (context: PersistedContext & { settings: SessionSettings }, timer: ReengagementTimer): number =>
  timer.armed_at + context.settings.reengagementInactivitySeconds * 1000;
