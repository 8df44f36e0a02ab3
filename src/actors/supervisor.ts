import type { Logger } from 'pino';
import type { Actor, InspectionEvent, Observer } from 'xstate';
import { createActor } from 'xstate';
import type { AppClock } from '../integrations/clock.js';
import type { Reply, SessionCommand, SessionEmitted } from '../machines/session.events.js';
import type { SessionContext, SessionMachine, SessionSettings } from '../machines/session.machine.js';
import type { ActivityStore } from './activity-store.js';

export type SessionActor = Actor<SessionMachine>;

export type AskFailure = { ok: false; reason: 'not_found' | 'capacity' | 'failed' | 'timeout' };
export type AskResult<T> = { ok: true; value: T } | AskFailure;

/** Whether a command may bring a session into being or needs one that exists. */
export type Routing = 'create' | 'existing';

export interface SupervisorOptions {
  clock: AppClock;
  logger: Logger;
  activity: ActivityStore;
  sessionLogic: SessionMachine;
  settings: SessionSettings;
  maxSessions: number;
  askTimeoutMs: number;
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void) | undefined;
}

/**
 * The supervisor actor: owns the registry of session actors, routes every command by
 * session_id, spawns on first use, evicts idle or least recently used inactive sessions,
 * and keeps one session's failure away from every other.
 *
 * Sessions are top-level actors in a Map, not children of one machine: spawning thousands of
 * children copies the parent's children map on each spawn (see architecture.md).
 * The Map's insertion order is the recency order: every routed command moves its session last.
 */
export class SessionSupervisor {
  private readonly sessions = new Map<string, SessionActor>();
  private readonly pending = new Map<SessionActor, Set<(failure: AskFailure) => void>>();

  constructor(private readonly options: SupervisorOptions) {}

  get size(): number {
    return this.sessions.size;
  }

  has(sessionId: string): boolean {
    return this.sessions.has(sessionId);
  }

  /** Read-only view of a session's state, for routes that only read. */
  snapshot(sessionId: string): { context: SessionContext; value: unknown } | undefined {
    const actor = this.sessions.get(sessionId);
    if (!actor) return undefined;
    const snapshot = actor.getSnapshot();
    return { context: snapshot.context, value: snapshot.value };
  }

  /**
   * Send a command and wait for the machine's reply. `build` receives the reply callback and
   * the current time and returns the command; the machine calls the callback once its state
   * holds the change.
   */
  ask<T>(sessionId: string, routing: Routing, build: (reply: Reply<T>, at: number) => SessionCommand): Promise<AskResult<T>> {
    const at = this.options.clock.now();
    const actor = this.sessions.get(sessionId) ?? (routing === 'create' ? this.spawn(sessionId, at) : undefined);
    if (!actor) return Promise.resolve({ ok: false, reason: routing === 'create' ? 'capacity' : 'not_found' });
    this.markRecent(sessionId, actor);

    return new Promise<AskResult<T>>((resolve) => {
      let settled = false;
      let timer: unknown;
      const settle = (result: AskResult<T>) => {
        if (settled) return;
        settled = true;
        if (timer !== undefined) this.options.clock.clearTimeout(timer);
        this.pending.get(actor)?.delete(fail);
        resolve(result);
      };
      const fail = (failure: AskFailure) => settle(failure);

      actor.send(build((value) => settle({ ok: true, value }), at));
      if (settled) return;
      if (actor.getSnapshot().status === 'error') return settle({ ok: false, reason: 'failed' });

      // Replies that wait on media calls arrive later; a machine bug must not hang the request.
      let waiting = this.pending.get(actor);
      if (!waiting) this.pending.set(actor, (waiting = new Set()));
      waiting.add(fail);
      timer = this.options.clock.setTimeout(() => fail({ ok: false, reason: 'timeout' }), this.options.askTimeoutMs);
    });
  }

  /** Stop every session actor (shutdown). */
  stopAll(): void {
    for (const [sessionId] of this.sessions) this.remove(sessionId, 'shutdown');
  }

  private spawn(sessionId: string, at: number): SessionActor | undefined {
    if (this.sessions.size >= this.options.maxSessions && !this.evictLeastRecentInactive()) return undefined;
    const { clock, inspect, settings } = this.options;
    const actor = createActor(this.options.sessionLogic, {
      // The inspector names each actor by its id: the session id is what an operator looks for.
      id: sessionId,
      input: { sessionId, at, settings },
      clock,
      ...(inspect ? { inspect } : {}),
    });
    actor.on('activity', (emitted) => this.forward(sessionId, emitted));
    actor.on('session.expired', () => this.remove(sessionId, 'idle'));
    actor.subscribe({ error: (error) => this.onSessionError(sessionId, actor, error) });
    this.sessions.set(sessionId, actor);
    actor.start();
    return actor;
  }

  private markRecent(sessionId: string, actor: SessionActor): void {
    this.sessions.delete(sessionId);
    this.sessions.set(sessionId, actor);
  }

  private evictLeastRecentInactive(): boolean {
    for (const [sessionId, actor] of this.sessions) {
      if (actor.getSnapshot().matches({ voice: 'inactive' })) {
        this.remove(sessionId, 'capacity');
        return true;
      }
    }
    return false;
  }

  private forward(sessionId: string, emitted: Extract<SessionEmitted, { type: 'activity' }>): void {
    // A throw inside an actor.on listener would escape to the process: contain it here.
    try {
      this.options.activity.trigger.record({ draft: emitted.draft });
    } catch (error) {
      this.options.logger.error({ err: error, session_id: sessionId }, 'activity record failed');
    }
  }

  private onSessionError(sessionId: string, actor: SessionActor, error: unknown): void {
    this.options.logger.error({ err: error, session_id: sessionId }, 'session actor failed; session discarded');
    for (const fail of this.pending.get(actor) ?? []) fail({ ok: false, reason: 'failed' });
    this.pending.delete(actor);
    if (this.sessions.get(sessionId) === actor) this.sessions.delete(sessionId);
  }

  private remove(sessionId: string, why: 'idle' | 'capacity' | 'shutdown'): void {
    const actor = this.sessions.get(sessionId);
    if (!actor) return;
    this.sessions.delete(sessionId);
    this.pending.delete(actor);
    this.options.logger.debug({ session_id: sessionId, why }, 'session evicted');
    // Stopping from inside the actor's own emission would re-enter it; let the current step finish.
    queueMicrotask(() => actor.stop());
  }
}
