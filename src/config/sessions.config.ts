/**
 * The sessions: how long one lives and when it rests, how many there may be and what they may
 * hold, and the switches of their policy (feature flags, critical steps, reengagement).
 */
import { z } from 'zod';
import { DEFAULT_CRITICAL_STEPS } from '../domain/critical-steps.js';
import { MAX_TIMER_SECONDS } from '../domain/timer-limit.js';
import { csv, featureFlagOverrides, nonNegativeInt, positiveInt } from './env-values.js';

export const sessionsEnv = z.object({
  SESSION_IDLE_TTL_SECONDS: positiveInt(86_400).pipe(z.number().max(MAX_TIMER_SECONDS)),
  SESSION_HIBERNATE_SECONDS: nonNegativeInt(60).pipe(z.number().max(MAX_TIMER_SECONDS)),
  MAX_SESSIONS: positiveInt(100_000),
  SESSION_MAX_BYTES: positiveInt(65_536).pipe(z.number().min(4096)),
  MEMORY_BUDGET_MB: positiveInt(1024).pipe(z.number().min(64)),
  FEATURE_FLAGS: featureFlagOverrides,
  CRITICAL_STEPS: csv.optional(),
  REENGAGEMENT_INACTIVITY_SECONDS: positiveInt(300).pipe(z.number().max(MAX_TIMER_SECONDS)),
});

export interface SessionsSection {
  /** An inactive session untouched this long is evicted. */
  idleTtlSeconds: number;
  /** SESSION_HIBERNATE_SECONDS: an untouched session with nothing under way is held as its context alone after this long; 0 never. */
  hibernateSeconds: number;
  maxSessions: number;
  /** SESSION_MAX_BYTES: what one session may hold (the session record of docs/decisions/0001-identity-values-masked-on-arrival.md plus stored events), measured at ingest. */
  maxBytes: number;
  /** What all sessions together may hold; past it hibernated sessions go, then new sessions get 503. */
  memoryBudgetMb: number;
  /** FEATURE_FLAGS: switches of this service, over their defaults. */
  featureFlagOverrides: Record<string, boolean>;
  /** Screen ids the trigger policy treats as critical, as configured (compared case-insensitively). */
  criticalSteps: string[];
  reengagementInactivitySeconds: number;
}

export function sessionsSection(e: z.infer<typeof sessionsEnv>): SessionsSection {
  return {
    idleTtlSeconds: e.SESSION_IDLE_TTL_SECONDS,
    hibernateSeconds: e.SESSION_HIBERNATE_SECONDS,
    maxSessions: e.MAX_SESSIONS,
    maxBytes: e.SESSION_MAX_BYTES,
    memoryBudgetMb: e.MEMORY_BUDGET_MB,
    featureFlagOverrides: e.FEATURE_FLAGS ?? {},
    criticalSteps: e.CRITICAL_STEPS ?? [...DEFAULT_CRITICAL_STEPS],
    reengagementInactivitySeconds: e.REENGAGEMENT_INACTIVITY_SECONDS,
  };
}
