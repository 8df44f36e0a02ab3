import { mergeSdkConfig } from '../domain/sdk-config.js';
import type { TriggerDecision } from '../domain/trigger-policy.js';
import { evaluateTriggerPolicy, triggerActivityPayload } from '../domain/trigger-policy.js';
import type { AppClock } from '../integrations/clock.js';
import type { TriggerEvaluateCommand } from '../machines/session/machine-events.js';
import type { ActivityLog } from '../store/ports.js';

export type StatelessTriggerRequest = Omit<TriggerEvaluateCommand, 'type' | 'at' | 'reply'>;

/**
 * An evaluation that names no session runs the policy alone, with no cooldown and no
 * suppression, and is still recorded (docs/decisions/0005-trigger-policy.md). No session actor exists to emit the activity,
 * so the actor system appends it to the activity log itself.
 */
export function evaluateWithoutSession(
  deps: { clock: AppClock; activity: ActivityLog; criticalSteps: string[] },
  request: StatelessTriggerRequest,
): TriggerDecision {
  const clientId = request.client_id ?? request.header_client_id;
  const config = mergeSdkConfig(request.sdk_overrides, clientId);
  const decision = evaluateTriggerPolicy(request.signals, { config, criticalSteps: deps.criticalSteps });
  deps.activity.append({
    kind: 'trigger',
    at: deps.clock.now(),
    session_id: null,
    user_id: request.user_id,
    payload: triggerActivityPayload(request.signals, decision, clientId),
    trace: request.trace,
  });
  return decision;
}
