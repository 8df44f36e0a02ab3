import type { AgentNotice } from '../domain/agent-notice.js';
import type { AgentPresence } from '../domain/voice-session.js';

export interface TokenRequest {
  room: string;
  identity: string;
  sessionId: string;
  /** Put the agent dispatch in the token itself: only for a room that could not be created. */
  dispatchAgent: boolean;
}

/**
 * The media server as the session machine's promise actors see it. Every call either
 * resolves or rejects within `callTimeoutMs`; what a failure means is the machine's business.
 */
export interface MediaProvider {
  /** false for the placeholder: the session machine then makes no media calls at all. */
  readonly ready: boolean;
  /** Returned to clients as `media_url` / `livekit_url`; "" when media is not configured. */
  readonly url: string;
  readonly tokenTtlSeconds: number;
  readonly callTimeoutMs: number;
  createRoom(room: string, sessionId: string): Promise<void>;
  /** The id of a dispatch of the voice agent already in the room (`preferredId` first), or null. */
  findAgentDispatch(room: string, preferredId: string | null): Promise<string | null>;
  /** Dispatches the voice agent into the room; not idempotent, so call it only after `findAgentDispatch`. */
  dispatchAgent(room: string, sessionId: string): Promise<string>;
  /**
   * Whether the room holds an agent participant (or an operator, who serves the call in its
   * place), holds neither, or is gone from the server (a restart of a server that does not create
   * rooms on join): the service's one sign that an agent joined (docs/decisions/0032-an-agent-joins-or-the-call-ends.md).
   */
  agentPresence(room: string): Promise<AgentPresence>;
  /** Deletes the dispatch `staleId` (one already gone counts as deleted), then dispatches the agent anew. */
  replaceAgentDispatch(room: string, sessionId: string, staleId: string | null): Promise<string>;
  /**
   * Removes `identity` from the room if it is an agent participant there, and says whether it
   * was: the way a job whose process died is taken out before livekit-server notices, 15 to 20 s
   * later (docs/reference/voice-agent.md, "Faults"). A user or an operator is never removed.
   */
  removeAgent(room: string, identity: string): Promise<boolean>;
  /** Deletes the room; a room that is already gone counts as deleted. */
  deleteRoom(room: string): Promise<void>;
  /** Sends the agent in the room a notice on the data channel (reliable, topic `context_updated`). */
  notifyAgent(room: string, notice: AgentNotice): Promise<void>;
  mintToken(request: TokenRequest): Promise<string>;
}

/** What mints a participant token outside the session machine: a copy of a named voice start (src/use-cases/voice-call.ts). */
export type TokenMinter = Pick<MediaProvider, 'mintToken' | 'url' | 'tokenTtlSeconds'>;

/** What takes a dead agent out of its room, outside the session machine (src/use-cases/agent-presence.ts). */
export type AgentRemover = Pick<MediaProvider, 'removeAgent' | 'ready'>;
