import type { AppClock } from '../integrations/clock.js';
import type { SessionContext } from '../machines/session.machine.js';

interface Hibernated {
  context: SessionContext;
  expiry: unknown;
}

/**
 * Sessions with nothing under way, held as their context alone once untouched for
 * SESSION_HIBERNATE_SECONDS. A running actor costs some 7 KB (XState gives every root actor its
 * own system, scheduler and closures); a hibernated one only its data. Each keeps its idle-eviction
 * deadline (last touch + SESSION_IDLE_TTL_SECONDS) as a timer on the injected clock, so it is
 * evicted exactly when its actor would have been.
 */
export class HibernatedSessions {
  // Insertion order is hibernation order, which follows last-touch order: the front is the least recently used.
  private readonly sessions = new Map<string, Hibernated>();

  constructor(
    private readonly clock: AppClock,
    private readonly idleTtlMs: number,
    private readonly onExpired: (sessionId: string) => void,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  has(sessionId: string): boolean {
    return this.sessions.has(sessionId);
  }

  peek(sessionId: string): SessionContext | undefined {
    return this.sessions.get(sessionId)?.context;
  }

  *contexts(): Generator<SessionContext> {
    for (const held of this.sessions.values()) yield held.context;
  }

  hold(sessionId: string, context: SessionContext): void {
    const remaining = context.last_touched_at + this.idleTtlMs - this.clock.now();
    // The owner removes it (through `remove`), so every eviction takes one path.
    const expiry = this.clock.setTimeout(() => this.onExpired(sessionId), Math.max(0, remaining));
    this.sessions.set(sessionId, { context, expiry });
  }

  /** Takes a session out to run it again; its expiry timer goes with it. */
  take(sessionId: string): SessionContext | undefined {
    const held = this.sessions.get(sessionId);
    if (!held) return undefined;
    this.drop(sessionId, held);
    return held.context;
  }

  /** The least recently used one, for eviction at MAX_SESSIONS. */
  leastRecent(): string | undefined {
    for (const [sessionId] of this.sessions) return sessionId;
    return undefined;
  }

  remove(sessionId: string): boolean {
    const held = this.sessions.get(sessionId);
    if (held) this.drop(sessionId, held);
    return held !== undefined;
  }

  clear(): void {
    for (const [sessionId, held] of this.sessions) this.drop(sessionId, held);
  }

  private drop(sessionId: string, held: Hibernated): void {
    this.clock.clearTimeout(held.expiry);
    this.sessions.delete(sessionId);
  }
}
