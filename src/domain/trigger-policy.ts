import { isCriticalStep } from './critical-steps.js';
import type { RegisteredSchema } from './screen-schema.js';
import type { SdkConfig } from './sdk-config.js';

/** What a client reports about the user on the current screen (the trigger body, docs/explanation/trigger-policy.md). */
export interface TriggerSignals {
  screen?: string | undefined;
  time_spent?: number | undefined;
  errors?: string[] | undefined;
  idle_seconds?: number | undefined;
}

/** The rules of docs/explanation/trigger-policy.md, in the order they are tried. */
export const TRIGGER_RULES = ['high_time_spent', 'repeated_errors', 'idle_on_critical_step'] as const;
export type TriggerRule = (typeof TRIGGER_RULES)[number];

export const REPEATED_ERRORS_AT_LEAST = 2;
export const IDLE_ON_CRITICAL_STEP_OVER_SECONDS = 12;

/** Why a matched rule did not fire in a session, in order of precedence (docs/decisions/0005-trigger-policy.md). */
export const SUPPRESSION_REASONS = ['assistant_active', 'cooldown', 'already_prompted'] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];

export type TriggerDecision =
  | { trigger: true; reason: TriggerRule; action: 'start_voice_agent'; intervention_mode: 'voice_offer' }
  | { trigger: false; reason: 'none'; action: 'none'; intervention_mode: 'none' }
  | {
      trigger: false;
      reason: SuppressionReason;
      action: 'none';
      intervention_mode: 'none';
      suppressed_reason: TriggerRule;
      retry_after_seconds?: number;
    };

export const NO_TRIGGER: TriggerDecision = {
  trigger: false,
  reason: 'none',
  action: 'none',
  intervention_mode: 'none',
};

export interface TriggerPolicy {
  /** The tenant's merged SDK config. */
  config: SdkConfig;
  /** Lower-cased screen ids that count as critical. */
  criticalSteps: readonly string[];
  /** Schemas the session registered; one may mark its screen critical. */
  schemas?: Readonly<Record<string, RegisteredSchema>>;
}

/** The first rule of docs/explanation/trigger-policy.md that the signals meet, or undefined. */
export function matchTriggerRule(signals: TriggerSignals, policy: TriggerPolicy): TriggerRule | undefined {
  const { features, thresholds } = policy.config;
  if (!features.suppress_high_time_spent_trigger && (signals.time_spent ?? 0) > thresholds.high_time_spent_seconds) {
    return 'high_time_spent';
  }
  if ((signals.errors?.length ?? 0) >= REPEATED_ERRORS_AT_LEAST) return 'repeated_errors';
  if (
    (signals.idle_seconds ?? 0) > IDLE_ON_CRITICAL_STEP_OVER_SECONDS &&
    isCriticalStep(signals.screen, policy.criticalSteps, policy.schemas)
  ) {
    return 'idle_on_critical_step';
  }
  return undefined;
}

/** The policy's answer before any session-level suppression: fire on the first matching rule. */
export function evaluateTriggerPolicy(signals: TriggerSignals, policy: TriggerPolicy): TriggerDecision {
  const rule = matchTriggerRule(signals, policy);
  if (!rule) return NO_TRIGGER;
  return { trigger: true, reason: rule, action: 'start_voice_agent', intervention_mode: 'voice_offer' };
}

/** The `trigger` activity payload (docs/reference/events.md): the signals as evaluated and the answer given. */
export function triggerActivityPayload(
  signals: TriggerSignals,
  decision: TriggerDecision,
  clientId: string | null,
): Record<string, unknown> {
  return { signals: { ...signals }, decision: { ...decision }, client_id: clientId };
}
