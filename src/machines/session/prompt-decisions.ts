/**
 * The session's decisions to prompt the app: whether a trigger evaluation offers voice and whether
 * a popup shows. Pure functions of the context and the command; the machine supplies what comes
 * from its state (an assistant active, a cooldown running) and applies the outcome.
 */
import type { ErrorWindow } from '../../domain/error-window.js';
import { heldCodes, onScreen, prune, restartAfterTrigger, withRequestCodes } from '../../domain/error-window.js';
import type { PopupDecision } from '../../domain/popup.js';
import { hiddenPopup, popupFor } from '../../domain/popup.js';
import { mergeSdkConfig } from '../../domain/sdk-config.js';
import type { TriggerDecision } from '../../domain/trigger-policy.js';
import { evaluateTriggerPolicy, triggerActivityPayload } from '../../domain/trigger-policy.js';
import { rememberPrompt, suppressTrigger, wasPrompted } from '../../domain/trigger-suppression.js';
import type { SessionContext } from './session-context.js';
import { activity } from './session-context.js';
import type { PopupInputs, SessionEmitted, TriggerEvaluateCommand } from './machine-events.js';

export type HoldBack = 'assistant_active' | 'cooldown' | null;

export type Evaluation = Omit<TriggerEvaluateCommand, 'type' | 'reply'>;

/** The session's error window for the evaluated screen, as it stands at the evaluation's time. */
function currentErrors(
  context: SessionContext,
  screen: string | null | undefined,
  at: number,
  windowSeconds: number,
): ErrorWindow {
  return prune(onScreen(context.errors, screen), at, windowSeconds * 1000);
}

export interface TriggerOutcome {
  decision: TriggerDecision;
  patch: Partial<SessionContext>;
  emitted: SessionEmitted[];
  cooldownMs: number;
}

/**
 * The trigger policy in the session (docs/decisions/0005-trigger-policy.md): the request's
 * signals, its error codes counted together with the failures the session holds for the screen
 * (one failure reported both ways counts once), then the suppressions.
 */
export function decideTrigger(context: SessionContext, command: Evaluation, holdBack: HoldBack): TriggerOutcome {
  const { at } = command;
  const identity = { user_id: context.user_id ?? command.user_id, client_id: context.client_id ?? command.client_id };
  const clientId = identity.client_id ?? command.header_client_id;
  const config = mergeSdkConfig(command.sdk_overrides, clientId);
  const screen = command.signals.screen ?? context.screen ?? undefined;
  const signals = { ...command.signals, screen };
  let errors = withRequestCodes(
    currentErrors(context, screen, at, config.thresholds.error_window_seconds),
    command.signals.errors ?? [],
    at,
  );
  const matched = evaluateTriggerPolicy(
    { ...signals, errors: heldCodes(errors) },
    { config, criticalSteps: context.settings.criticalSteps, schemas: context.schemas },
  );
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
      command: {
        command: 'suggest_start_voice_agent',
        session_id: context.session_id,
        payload: { reason: decision.reason, intervention_mode: 'offer' },
      },
    });
  }
  patch.errors = errors;
  const payload = { ...triggerActivityPayload(signals, decision, clientId), held_failures: errors.failures.length };
  emitted.unshift(activity({ ...context, user_id: identity.user_id }, 'trigger', at, command.trace, payload));
  return { decision, patch, emitted, cooldownMs };
}

export interface PopupOutcome {
  decision: PopupDecision;
  patch: Partial<SessionContext>;
  emitted: SessionEmitted[];
}

/** The popup decision of the session machine: never during voice, at most one per cooldown. */
export function decidePopup(
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
      decision = {
        ...hiddenPopup('cooldown'),
        retry_after_seconds: Math.max(1, Math.ceil((context.popup_cooldown_until! - at) / 1000)),
      };
    } else {
      decision = candidate;
    }
    if (decision.show) {
      patch = { popup_cooldown_until: at + config.thresholds.assistant_prompt_cooldown_seconds * 1000, updated_at: at };
      emitted.push({
        type: 'command',
        command: {
          command: 'show_popup',
          session_id: context.session_id,
          payload: { message: decision.message!, delay_ms: decision.delay_ms, reason: decision.popup_reason_code },
        },
      });
    }
  }
  emitted.unshift(
    activity(context, 'popup_evaluate', at, command.trace, { screen, decision: { ...decision }, client_id: clientId }),
  );
  return { decision, patch, emitted };
}
