/**
 * What a session tells its voice agent over the room's data channel while a call runs: the
 * context changed, fetch it again (docs/decisions/0006-the-voice-agents-context.md). It names the session and why,
 * never a value: the agent reads what changed from the context, which is masked.
 */
export interface AgentNotice {
  type: 'context_updated';
  session_id: string;
  /** The SDK event that changed what the agent should know. */
  reason: string;
  /** Epoch milliseconds of that event. */
  at: number;
}

/** The data packet's topic: the agent listens for it. */
export const AGENT_NOTICE_TOPIC = 'context_updated';

/** The events the deployed backend signalled the agent for (`_VOICE_AGENT_CONTEXT_PUSH_EVENTS`). */
export const CONTEXT_PUSH_EVENTS: ReadonlySet<string> = new Set(['component_input', 'validation_failed']);
