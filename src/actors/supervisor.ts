import type { Logger } from 'pino';
import type { Actor, InspectionEvent, Observer } from 'xstate';
import { createActor } from 'xstate';
import type { AppClock } from '../integrations/clock.js';
import type { Reply, SessionCommand, SessionEmitted } from '../machines/session.events.js';
import type { SessionContext, SessionMachine, SessionSettings } from '../machines/session.machine.js';
import { HIBERNATION_STATE, canHibernate } from '../machines/session.machine.js';
import type { ActivityStore } from './activity-store.js';
import { HibernatedSessions } from './hibernated-sessions.js';
import type { MemoryBudget } from './memory-budget.js';

export type SessionActor = Actor<SessionMachine>;

const SWEEP_MIN_INTERVAL_MS = 1000;

export type AskFailure = { ok: false; reason: 'not_found' | 'capacity' | 'memory' | 'failed' | 'timeout' };
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
  /** SESSION_HIBERNATE_SECONDS in milliseconds; 0 keeps every session running. */
  hibernateAfterMs: number;
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void) | undefined;
  /** MEMORY_BUDGET_MB: kept informed of what every session holds, asked before a new one is made. */
  memoryBudget: MemoryBudget;
}

/**
 * The supervisor actor: owns the registry of session actors, routes every command by
 * session_id, spawns on first use, evicts idle or least recently used inactive sessions,
 * and keeps one session's failure away from every other.
 *
 * Sessions are top-level actors in a Map, not children of one machine: spawning thousands of
 * children copies the parent's children map on each spawn (see architecture.md).
 * The Map's insertion order is the recency order: every routed command moves its session last.
 *
 * A session untouched for SESSION_HIBERNATE_SECONDS with nothing under way hibernates: its actor
 * stops and its context is held in `hibernated`; the next command brings it back. One sweep timer
 * serves all of them: the least recently touched session is first in the Map, so the sweep is
 * due when that one is.
 */
export class SessionSupervisor {
  private readonly sessions = new Map<string, SessionActor>();
  private readonly hibernated: HibernatedSessions;
  private readonly pending = new Map<SessionActor, Set<(failure: AskFailure) => void>>();
  private sweepTimer: unknown;
  private sweepDueAt: number | undefined;
  private lastSweepAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: SupervisorOptions) {
    this.hibernated = new HibernatedSessions(options.clock, options.settings.idleTtlMs, (sessionId) => this.remove(sessionId, 'idle'));
  }

  /** Every session held, running or hibernated. */
  get size(): number {
    return this.sessions.size + this.hibernated.size;
  }

  /** How many sessions run as actors and how many hibernate. */
  get counts(): { running: number; hibernated: number } {
    return { running: this.sessions.size, hibernated: this.hibernated.size };
  }

  has(sessionId: string): boolean {
    return this.sessions.has(sessionId) || this.hibernated.has(sessionId);
  }

  /** Read-only view of a session's state, for routes that only read; reading does not wake a hibernated session. */
  snapshot(sessionId: string): { context: SessionContext; value: unknown } | undefined {
    const actor = this.sessions.get(sessionId);
    if (!actor) {
      const context = this.hibernated.peek(sessionId);
      return context ? { context, value: HIBERNATION_STATE } : undefined;
    }
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
    const existing = this.sessions.get(sessionId) ?? this.wake(sessionId, at);
    if (!existing && routing === 'create' && !this.roomInMemoryBudget()) return Promise.resolve({ ok: false, reason: 'memory' });
    const actor = existing ?? (routing === 'create' ? this.spawn(sessionId, at) : undefined);
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

  /** Stop every session actor and drop the hibernated ones (shutdown). */
  stopAll(): void {
    for (const [sessionId] of this.sessions) this.remove(sessionId, 'shutdown');
    this.hibernated.clear();
    this.options.memoryBudget.clear();
    if (this.sweepTimer !== undefined) this.options.clock.clearTimeout(this.sweepTimer);
    this.sweepTimer = this.sweepDueAt = undefined;
  }

  /** Past the memory budget, hibernated sessions go first, least recently touched first; false if that is not enough. */
  private roomInMemoryBudget(): boolean {
    const budget = this.options.memoryBudget;
    for (let oldest = this.hibernated.leastRecent(); !budget.hasRoom && oldest !== undefined; oldest = this.hibernated.leastRecent()) {
      this.remove(oldest, 'memory');
    }
    return budget.hasRoom;
  }

  private spawn(sessionId: string, at: number): SessionActor | undefined {
    if (this.size >= this.options.maxSessions && !this.evictLeastRecentInactive()) return undefined;
    return this.run(sessionId, at, undefined);
  }

  /** A hibernated session's actor, running again from its context. */
  private wake(sessionId: string, at: number): SessionActor | undefined {
    const restored = this.hibernated.take(sessionId);
    if (!restored) return undefined;
    this.options.logger.debug({ session_id: sessionId }, 'session woken');
    return this.run(sessionId, at, restored);
  }

  private run(sessionId: string, at: number, restored: SessionContext | undefined): SessionActor {
    const { clock, inspect, settings } = this.options;
    const actor = createActor(this.options.sessionLogic, {
      // The inspector names each actor by its id: the session id is what an operator looks for.
      id: sessionId,
      input: { sessionId, at, settings, restored },
      clock,
      ...(inspect ? { inspect } : {}),
    });
    actor.on('activity', (emitted) => this.forward(sessionId, emitted));
    actor.on('session.expired', () => this.remove(sessionId, 'idle'));
    this.options.memoryBudget.track(sessionId, restored?.held_bytes ?? 0);
    actor.subscribe({
      // Only while registered: a stopping actor's last snapshot must not count a session gone or hibernated.
      next: (snapshot) => {
        if (this.sessions.get(sessionId) === actor) this.options.memoryBudget.track(sessionId, snapshot.context.held_bytes ?? 0);
      },
      error: (error) => this.onSessionError(sessionId, actor, error),
    });
    this.sessions.set(sessionId, actor);
    actor.start();
    this.scheduleSweep(at + this.options.hibernateAfterMs);
    return actor;
  }

  private scheduleSweep(due: number): void {
    // At most one sweep a second: sessions go idle one after another, and each sweep walks the
    // busy ones at the front again. Hibernating a little late costs only memory for a moment.
    const dueAt = Math.max(due, this.lastSweepAt + SWEEP_MIN_INTERVAL_MS);
    if (this.options.hibernateAfterMs <= 0 || (this.sweepDueAt !== undefined && this.sweepDueAt <= dueAt)) return;
    const { clock } = this.options;
    if (this.sweepTimer !== undefined) clock.clearTimeout(this.sweepTimer);
    this.sweepDueAt = dueAt;
    this.sweepTimer = clock.setTimeout(() => {
      this.sweepTimer = this.sweepDueAt = undefined;
      this.sweep();
    }, Math.max(0, dueAt - clock.now()));
  }

  /**
   * Hibernates, least recently touched first, every session untouched for the hibernation delay
   * that has nothing under way; stops at the first one touched too recently. A session busy now
   * (voice, cooldown, reengagement timer, a reply pending) stays and is looked at again later.
   */
  private sweep(): void {
    const now = this.options.clock.now();
    this.lastSweepAt = now;
    const { hibernateAfterMs } = this.options;
    let busy = false;
    for (const [sessionId, actor] of this.sessions) {
      const snapshot = actor.getSnapshot();
      const dueAt = snapshot.context.last_touched_at + hibernateAfterMs;
      if (dueAt > now) {
        this.scheduleSweep(dueAt);
        break;
      }
      if (!canHibernate(snapshot) || (this.pending.get(actor)?.size ?? 0) > 0) {
        busy = true;
        continue;
      }
      this.sessions.delete(sessionId);
      this.pending.delete(actor);
      actor.stop();
      this.hibernated.hold(sessionId, snapshot.context);
      this.options.logger.debug({ session_id: sessionId }, 'session hibernated');
    }
    if (busy) this.scheduleSweep(now + hibernateAfterMs);
  }

  private markRecent(sessionId: string, actor: SessionActor): void {
    this.sessions.delete(sessionId);
    this.sessions.set(sessionId, actor);
  }

  private evictLeastRecentInactive(): boolean {
    // Hibernated sessions go first: nothing is under way in them, and they have been untouched
    // longest, bar a running one that a cooldown or reengagement timer kept from hibernating.
    const hibernated = this.hibernated.leastRecent();
    if (hibernated !== undefined) {
      this.remove(hibernated, 'capacity');
      return true;
    }
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
    if (this.sessions.get(sessionId) === actor) {
      this.sessions.delete(sessionId);
      this.options.memoryBudget.forget(sessionId);
    }
  }

  /** Every eviction comes here, of a running session or a hibernated one. */
  private remove(sessionId: string, why: 'idle' | 'capacity' | 'memory' | 'shutdown'): void {
    this.options.memoryBudget.forget(sessionId);
    const actor = this.sessions.get(sessionId);
    if (!actor) {
      if (this.hibernated.remove(sessionId)) this.options.logger.debug({ session_id: sessionId, why }, 'session evicted');
      return;
    }
    this.sessions.delete(sessionId);
    this.pending.delete(actor);
    this.options.logger.debug({ session_id: sessionId, why }, 'session evicted');
    // Stopping from inside the actor's own emission would re-enter it; let the current step finish.
    queueMicrotask(() => actor.stop());
  }
}
