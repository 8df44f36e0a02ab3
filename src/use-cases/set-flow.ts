/**
 * The set-flow use case: the user's flow and current step registered in the session (made if it
 * is new), which answers the step's facts and the progress; an empty step sequence forgets it.
 */
import type { AskResult, SessionHost } from '../actor-system/session-host.js';
import type { FlowSetCommand, FlowSetResult } from '../machines/session/machine-events.js';

export type FlowRequest = Omit<FlowSetCommand, 'type' | 'at' | 'reply'>;

export function setFlow(
  host: SessionHost,
  sessionKey: string,
  request: FlowRequest,
): Promise<AskResult<FlowSetResult>> {
  return host.ask<FlowSetResult>(sessionKey, 'create', (reply, at) => ({ type: 'flow.set', ...request, at, reply }));
}
