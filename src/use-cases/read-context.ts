/**
 * The read-context use case: what a voice agent is told of its session (screen, hints, flow,
 * knowledge base, system prompt), built by the session itself so the fetch counts as a sign the
 * call is alive.
 */
import type { AskResult, SessionHost } from '../actor-system/session-host.js';
import type { AgentContext, AgentContextSources } from '../domain/agent-context.js';
import type { ContextFetchCommand } from '../machines/session/machine-events.js';

/**
 * The agent context of an existing session, from the shared `sources` (knowledge base, prompt),
 * for the agent of dispatch `dispatchId` (null: it did not say).
 */
export function readContext(
  host: SessionHost,
  sessionKey: string,
  trace: ContextFetchCommand['trace'],
  sources: AgentContextSources,
  dispatchId: string | null,
): Promise<AskResult<AgentContext>> {
  return host.ask<AgentContext>(sessionKey, 'existing', (reply, at) => ({
    type: 'context.fetch',
    at,
    trace,
    sources,
    dispatch_id: dispatchId,
    reply,
  }));
}
