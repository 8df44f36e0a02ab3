import type { AgentContextSources } from '../domain/agent-context.js';
import type { Reply, SessionCommand } from '../machines/session/machine-events.js';

/**
 * A session command as it crosses to a session hosted elsewhere: plain JSON. The reply callback
 * stays behind (the handler gives the command a new one); the shared knowledge base and agent
 * context sources stay behind too (every process loads its own at start). A server-masked hint's
 * matcher stays behind on purpose: it closes over the raw value, which must never reach the
 * engine's journal, so a session hosted elsewhere cannot test a masked hint against its schema.
 */
export type WireCommand = { type: SessionCommand['type'] } & Record<string, unknown>;

const LEFT_BEHIND = new Set(['reply', 'matchHint', 'sources', 'knowledge_base']);

export function toWireCommand(command: SessionCommand): WireCommand {
  const wire: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(command)) {
    if (!LEFT_BEHIND.has(key) && typeof value !== 'function') wire[key] = value;
  }
  return wire as WireCommand;
}

/** The command again, at the invocation's time, with this process's shared sources and a new reply. */
export function fromWireCommand(
  wire: WireCommand,
  at: number,
  sources: AgentContextSources,
  reply: Reply<unknown>,
): SessionCommand {
  const command: Record<string, unknown> = { ...wire, at, reply };
  if (wire.type === 'context.fetch') command.sources = sources;
  if (wire.type === 'popup.evaluate' || wire.type === 'assistant.evaluate' || wire.type === 'flow.set')
    command.knowledge_base = sources.knowledgeBase;
  return command as unknown as SessionCommand;
}

const COMMAND_TYPES: ReadonlySet<string> = new Set<SessionCommand['type']>([
  'session.ingest',
  'context.fetch',
  'trigger.evaluate',
  'voice.start',
  'voice.stop',
  'popup.evaluate',
  'assistant.evaluate',
  'flow.set',
  'dropoff.register',
  'dropoff.cancel',
  'consent.record',
  'agent.check',
]);

/** The handler is reachable only through the private ingress, but what it is given is still checked. */
export function isWireCommand(value: unknown): value is WireCommand {
  return typeof value === 'object' && value !== null && COMMAND_TYPES.has(String((value as { type?: unknown }).type));
}
