/**
 * Agents' presence connections (GET /v1/assistant/presence/{session_id}): each job of the voice
 * agent holds one open while it is in a call's room. A process that dies closes it at once (its
 * sockets close with it), long before livekit-server drops its participant (15 to 20 s, its own
 * fixed timeouts). So a connection that closed, and was not opened again within the grace,
 * takes that agent out of its room and makes the call check its room now: the check finds no
 * agent and sends a new one, which opens with a sorry
 * (docs/decisions/0038-agent-presence-connections.md).
 */
import type { Logger } from 'pino';
import type { SessionHost } from '../actor-system/session-host.js';
import type { AppClock } from '../integrations/clock.js';
import type { AgentRemover } from '../integrations/media-port.js';
import { roomName } from '../domain/voice-session.js';
import { checkAgentNow } from './agent-check.js';

/**
 * How long a closed connection waits for its job to open it again before the agent counts as
 * gone: a live job reconnects within a fraction of a second (agent/presence.ts), a dead one never.
 */
export const PRESENCE_GRACE_MS = 2_000;

export interface AgentPresenceDeps {
  host: SessionHost;
  agents: AgentRemover;
  clock: AppClock;
  roomPrefix: string;
  logger: Logger;
}

/** One agent of one call: what a connection is held for. */
interface Holder {
  /** Connections open now (a reconnect can overlap the one it replaces). */
  open: number;
  /** The grace timer after the last one closed. */
  timer: unknown;
}

export class AgentPresence {
  private readonly holders = new Map<string, Holder>();
  /** How to end each open connection, for a service that stops. */
  private readonly connections = new Set<() => void>();
  private closing = false;

  constructor(private readonly deps: AgentPresenceDeps) {}

  /**
   * A connection opened for `identity` in the session's room; `end` closes it from this side.
   * The function returned is called when it closes, whichever side closed it.
   */
  hold(sessionKey: string, identity: string, end: () => void): () => void {
    const key = `${sessionKey}\u0000${identity}`;
    let holder = this.holders.get(key);
    if (!holder) {
      holder = { open: 0, timer: undefined };
      this.holders.set(key, holder);
    }
    if (holder.timer !== undefined) {
      this.deps.clock.clearTimeout(holder.timer);
      holder.timer = undefined;
    }
    holder.open += 1;
    this.connections.add(end);
    const current = holder;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.connections.delete(end);
      current.open -= 1;
      if (current.open > 0) return;
      if (this.closing) {
        this.holders.delete(key);
        return;
      }
      current.timer = this.deps.clock.setTimeout(() => {
        this.holders.delete(key);
        void this.gone(sessionKey, identity);
      }, PRESENCE_GRACE_MS);
    };
  }

  /** The service is stopping: every connection is ended, and none starts a grace (a stopping service says nothing of its agents). */
  closeAll(): void {
    this.closing = true;
    for (const holder of this.holders.values())
      if (holder.timer !== undefined) this.deps.clock.clearTimeout(holder.timer);
    this.holders.clear();
    for (const end of [...this.connections]) end();
  }

  private async gone(sessionKey: string, identity: string): Promise<void> {
    const { agents, host, logger, roomPrefix } = this.deps;
    const room = roomName(roomPrefix, sessionKey);
    let removed = false;
    try {
      if (agents.ready) removed = await agents.removeAgent(room, identity);
    } catch (error) {
      // The check below still runs: once livekit-server drops the participant, it finds it gone.
      logger.warn({ err: error, room, identity }, 'could not remove an agent whose presence connection closed');
    }
    logger.info(
      { room, identity, removed },
      "an agent's presence connection closed and was not opened again: checking its room",
    );
    await checkAgentNow(host, sessionKey).catch((error: unknown) =>
      logger.warn({ err: error, room }, 'the room check after a presence loss failed'),
    );
  }
}
