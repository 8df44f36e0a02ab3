/**
 * The decision use cases: whether to offer the voice assistant now, whether to show a popup, and
 * both at once, each decided by the session (its cooldown, suppressions and held failures), made
 * if it is new. Transport (the routes, the WebSocket) parses and answers.
 */
import type { AskResult, SessionHost } from '../actor-system/session-host.js';
import type { PopupDecision } from '../domain/popup.js';
import type { TriggerDecision } from '../domain/trigger-policy.js';
import type {
  AssistantEvaluateCommand,
  PopupEvaluateCommand,
  SurfacesDecision,
  TriggerEvaluateCommand,
} from '../machines/session/machine-events.js';

/** What an evaluation carries besides the time and the reply. */
type Request<Command> = Omit<Command, 'type' | 'at' | 'reply'>;

export type TriggerRequest = Request<TriggerEvaluateCommand>;
export type PopupRequest = Request<PopupEvaluateCommand>;
export type SurfacesRequest = Request<AssistantEvaluateCommand>;

/** The trigger policy in the session of `sessionKey`. */
export function evaluateTrigger(
  host: SessionHost,
  sessionKey: string,
  request: TriggerRequest,
): Promise<AskResult<TriggerDecision>> {
  return host.ask<TriggerDecision>(sessionKey, 'create', (reply, at) => ({
    type: 'trigger.evaluate',
    ...request,
    at,
    reply,
  }));
}

/** The popup decision in the session of `sessionKey`. */
export function evaluatePopup(
  host: SessionHost,
  sessionKey: string,
  request: PopupRequest,
): Promise<AskResult<PopupDecision>> {
  return host.ask<PopupDecision>(sessionKey, 'create', (reply, at) => ({
    type: 'popup.evaluate',
    ...request,
    at,
    reply,
  }));
}

/** Trigger first, then the popup, in one turn of the session (POST /v1/assistant/evaluate, a WebSocket control_state). */
export function evaluateSurfaces(
  host: SessionHost,
  sessionKey: string,
  request: SurfacesRequest,
): Promise<AskResult<SurfacesDecision>> {
  return host.ask<SurfacesDecision>(sessionKey, 'create', (reply, at) => ({
    type: 'assistant.evaluate',
    ...request,
    at,
    reply,
  }));
}
