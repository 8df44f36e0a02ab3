import { isCriticalStep } from './critical-steps.js';
import type { ErrorWindow } from './error-window.js';
import { latestFailure } from './error-window.js';
import type { KnowledgeBase } from './kyc-knowledge.js';
import { failureGuidance, stepIdFor } from './kyc-knowledge.js';
import type { RegisteredSchema } from './screen-schema.js';
import { IDLE_ON_CRITICAL_STEP_OVER_SECONDS } from './trigger-policy.js';

/** What the SDK's `DynamicPopup` reads. */
export interface PopupDecision {
  show: boolean;
  message: string | null;
  popup_reason_code: PopupReason;
  delay_ms: number;
  retry_after_seconds?: number;
}

export const POPUP_SHOW_REASONS = ['validation_failed', 'verification_failed', 'idle_on_critical_step'] as const;
export const POPUP_HOLD_REASONS = ['none', 'disabled', 'assistant_active', 'cooldown', 'voice_offered'] as const;
export type PopupReason = (typeof POPUP_SHOW_REASONS)[number] | (typeof POPUP_HOLD_REASONS)[number];

/** Long enough for the user to read the field's own error first. */
export const POPUP_AFTER_FAILURE_DELAY_MS = 1500;

export const GENERIC_POPUP_MESSAGE = 'Need help completing this step? The assistant can guide you.';

export const hiddenPopup = (reason: (typeof POPUP_HOLD_REASONS)[number]): PopupDecision => ({
  show: false,
  message: null,
  popup_reason_code: reason,
  delay_ms: 0,
});

export interface PopupFacts {
  now: number;
  screen: string | null;
  /** The window already pruned for `now` and moved to `screen`. */
  errors: ErrorWindow;
  /** From the request, else seconds since the session last saw the user. */
  idleSeconds: number;
  criticalSteps: readonly string[];
  schemas: Readonly<Record<string, RegisteredSchema>>;
  knowledgeBase: KnowledgeBase;
}

/**
 * Why a popup would help now, and what it says: a failure still held for this screen (its
 * meaning from the knowledge base), else idling on a critical step. Messages are operator text
 * from the knowledge base or fixed text, so no value a user typed can appear in one.
 */
export function popupFor(facts: PopupFacts): PopupDecision {
  const stepId = stepIdFor(facts.knowledgeBase, facts.screen);
  const step = stepId ? facts.knowledgeBase.steps[stepId] : undefined;
  const stepMessage = step ? `Need help with ${step.title}? The assistant can guide you.` : GENERIC_POPUP_MESSAGE;
  const failure = latestFailure(facts.errors);
  if (failure) {
    const guidance = failure.codes
      .map((code) => failureGuidance(facts.knowledgeBase, stepId, code))
      .find((found) => found !== undefined);
    return {
      show: true,
      // `meaning` is written for the user; `recovery` is instructions to the voice agent.
      message: guidance ? `${guidance.meaning} Need a hand? The assistant can help.` : stepMessage,
      popup_reason_code: failure.kind === 'reported' ? 'verification_failed' : 'validation_failed',
      delay_ms: POPUP_AFTER_FAILURE_DELAY_MS,
    };
  }
  if (
    facts.idleSeconds > IDLE_ON_CRITICAL_STEP_OVER_SECONDS &&
    isCriticalStep(facts.screen, facts.criticalSteps, facts.schemas)
  ) {
    return { show: true, message: stepMessage, popup_reason_code: 'idle_on_critical_step', delay_ms: 0 };
  }
  return hiddenPopup('none');
}
