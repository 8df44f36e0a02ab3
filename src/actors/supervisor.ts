import type { Logger } from 'pino';
import type { Actor, InspectionEvent, Observer } from 'xstate';
import { createActor } from 'xstate';
import type { AppClock } from '../integrations/clock.js';
import type { AssistantCommand, IngestResult, Reply, SessionCommand, SessionEmitted } from '../machines/session/events.js';
import type { AgentNotices } from './agent-notices.js';
import type { SessionContext, SessionSettings } from '../machines/session/context.js';
import type { SessionMachine, SessionSnapshot } from '../machines/session/machine.js';
import { canHibernate, canLeaveMemory } from '../machines/session/persistence.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import { observeStep, stepStarted } from '../metrics/service-metrics.js';
import type { ActivityLog, Durable, SessionStore, StoredSession } from '../store/ports.js';
import { UnreadableSessionError } from '../store/ports.js';
import type { SessionListQuery, SessionPage } from './session-listing.js';
import { flowProgressOf, pageOfSessions } from './session-listing.js';
import { CommandBatch } from './command-batch.js';
import { CommandListeners } from './command-listeners.js';
import { EarliestTimer } from './earliest-timer.js';
import type { AskFailure, AskResult, Routing, SessionHost } from './session-host.js';
import { isQuiescent, restoredVoice, storedContext, storedView, toStored } from './stored-session.js';
import { storedDamage } from './stored-session-check.js';
import type { MemoryBudget } from './memory-budget.js';

export type SessionActor = Actor<SessionMachine>;

const SWEEP_MIN_INTERVAL_MS = 1000;
/** Sessions woken per turn of the wake timer: a restart after long downtime finds many due at once. */
const WAKE_BATCH = 500;

/** An answer the store could not keep: the client is told to retry. */
const UNAVAILABLE: AskFailure = { ok: false, reason: 'unavailable' };

export interface SupervisorOptions {
  clock: AppClock;
  logger: Logger;
  activity: ActivityLog;
  /** Every session held: running ones are saved on each change, hibernated ones live only here. */
  store: SessionStore;
  sessionLogic: SessionMachine;
  settings: SessionSettings;
  maxSessions: number;
  askTimeoutMs: number;
  /** SESSION_HIBERNATE_SECONDS in milliseconds; 0 keeps every session running. */
  hibernateAfterMs: number;
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void) | undefined;
  /** Times each command's synchronous step; absent, nothing is timed. */
  metrics?: ServiceMetrics | undefined;
  /** MEMORY_BUDGET_MB: kept informed of what every session holds, asked before a new one is made. */
  memoryBudget: MemoryBudget;
  /** Where a session's notices to its voice agent go; absent, none is sent. */
  agentNotices?: AgentNotices | undefined;
}

/**
 * The supervisor actor: owns the registry of session actors, routes every command by
 * session_id, spawns on first use, evicts idle or least recently used inactive sessions,
 * and keeps one session's failure away from every other.
 *
 * Sessions are top-level actors in a Map, not children of one machine: spawning thousands of
 * children copies the parent's children map on each spawn (docs/decisions/0018-sessions-are-top-level-actors.md).
 * The Map's insertion order is the recency order: every routed command moves its session last.
 *
 * A session untouched for SESSION_HIBERNATE_SECONDS with nothing under way hibernates: its actor
 * stops and it lives only in the store; the next command brings it back. One sweep timer serves
 * all of them: the least recently touched session is first in the Map, so the sweep is due when
 * that one is. One wake timer serves the sessions only in the store: it is due at the earliest
 * deadline the store holds (an idle eviction, or after a restart any timer a session had).
 *
 * A session enters memory in `run` and leaves it in `unload` (a failed actor in `onSessionError`); nothing else adds to or takes
 * from the running Map.
 */
export class SessionSupervisor implements SessionHost {
  private readonly sessions = new Map<string, SessionActor>();
  private readonly pending = new Map<SessionActor, Set<(failure: AskFailure) => void>>();
  /** Keyed by id, so hibernation does not drop them. */
  private readonly commandListeners: CommandListeners;
  private held: number;
  private readonly sweepTimer: EarliestTimer;
  private lastSweepAt = Number.NEGATIVE_INFINITY;
  private readonly wakeTimer: EarliestTimer;
  private readonly batch: CommandBatch;

  constructor(private readonly options: SupervisorOptions) {
    this.held = options.store.count();
    this.commandListeners = new CommandListeners(options.logger);
    this.batch = new CommandBatch((error) => options.logger.error({ err: error }, 'command delivery failed'));
    this.sweepTimer = new EarliestTimer(options.clock, () => this.sweep());
    this.wakeTimer = new EarliestTimer(options.clock, () => this.wakeDue());
    // Deadlines already past at start fire now, once.
    this.scheduleWake(options.store.nextWakeAfter(Number.NEGATIVE_INFINITY));
    options.store.onRefused?.((sessionIds) => this.unloadRefused(sessionIds));
  }

  /** Every session held, running or hibernated. */
  get size(): number {
    return this.held;
  }

  /** How many sessions run as actors and how many hibernate (live only in the store). */
  get counts(): { running: number; hibernated: number } {
    return { running: this.sessions.size, hibernated: this.held - this.sessions.size };
  }

  has(sessionId: string): boolean {
    return this.sessions.has(sessionId) || this.loadStored(sessionId) !== undefined;
  }

  /** Read-only view of a session's state, for routes that only read; reading does not wake a hibernated session. */
  snapshot(sessionId: string): { context: SessionContext; value: unknown } | undefined {
    const actor = this.sessions.get(sessionId);
    if (!actor) {
      const stored = this.loadStored(sessionId);
      return stored ? storedView(stored, this.options.settings, this.options.clock.now()) : undefined;
    }
    const snapshot = actor.getSnapshot();
    return { context: snapshot.context, value: snapshot.value };
  }

  /**
   * One page of the sessions held, running and hibernated, filtered and sorted (GET /api/sessions
   * and the console): the store selects the page from its summary rows (SQL over indexed columns,
   * or one walk in memory), then the flow of the page's sessions is read. Reading wakes no session.
   */
  list(query: SessionListQuery): SessionPage {
    return pageOfSessions(
      {
        select: (selection) => this.options.store.selectSummaries(selection),
        isRunning: (sessionId) => this.sessions.has(sessionId),
        flowOf: (sessionId) => {
          const held = this.snapshot(sessionId);
          return held ? flowProgressOf(held.context) : null;
        },
      },
      query,
      this.options.clock.now(),
    );
  }

  /**
   * Send a command and wait for the machine's reply, then for what it changed to be committed.
   * `build` receives the reply callback and the current time and returns the command; the
   * machine calls the callback once its state holds the change. The command reaches its session
   * with the others of this event-loop turn (command-batch.ts), in the order they were asked.
   */
  /** Applied before it is answered: nothing to gain here from answering earlier. */
  ingest(sessionId: string, build: (reply: Reply<IngestResult>, at: number) => SessionCommand): Promise<AskResult<IngestResult>> {
    return this.ask(sessionId, 'create', build);
  }

  ask<T>(sessionId: string, routing: Routing, build: (reply: Reply<T>, at: number) => SessionCommand): Promise<AskResult<T>> {
    const sent = this.send(sessionId, routing, build);
    // In memory a write is kept when made: the reply is the answer (waiting on two resolved
    // promises, or only on an async function's own, cost 1.4 KB and 0.2 KB an event).
    if (this.options.store.committedOnWrite && this.options.activity.committedOnWrite) return sent;
    return this.afterCommit(sent);
  }

  private afterCommit<T>(sent: Promise<AskResult<T>>): Promise<AskResult<T>> {
    // Chained, not awaited: an ask waits on its group's one commit promise with two small
    // promises, where two async functions and a Promise.all allocated more (docs/decisions/0012-where-a-durable-request-goes.md).
    return sent.then((result) => (result.ok ? this.committed().then((ok) => (ok ? result : UNAVAILABLE)) : result));
  }

  /** Whether everything queued so far, session saves and activity alike, is committed. */
  committed(): Promise<boolean> {
    const store: Durable = this.options.store;
    const activity: Durable = this.options.activity;
    // One store keeping both (STORE=sqlite) commits both in one group: one wait, not two.
    const both = store === activity ? store.commit() : Promise.all([store.commit(), activity.commit()]);
    return both.then(
      () => true,
      (error: unknown) => {
        this.options.logger.error({ err: error }, 'store commit failed; request refused');
        return false;
      },
    );
  }

  /** Queues the command for this turn's batch (command-batch.ts); the session is found or made when it is delivered. */
  private send<T>(sessionId: string, routing: Routing, build: (reply: Reply<T>, at: number) => SessionCommand): Promise<AskResult<T>> {
    return new Promise<AskResult<T>>((resolve) => {
      this.batch.add(() => {
        try {
          this.deliver(sessionId, routing, build, resolve);
        } catch (error) {
          this.options.logger.error({ err: error, session_id: sessionId }, 'command could not be delivered');
          resolve({ ok: false, reason: 'failed' });
        }
      });
    });
  }

  /** Runs the command in its session now; `resolve` gets the reply, or why there is none. */
  private deliver<T>(sessionId: string, routing: Routing, build: (reply: Reply<T>, at: number) => SessionCommand, resolve: (result: AskResult<T>) => void): void {
    const at = this.options.clock.now();
    const existing = this.sessions.get(sessionId) ?? this.wake(sessionId, at);
    if (!existing && routing === 'create' && !this.roomInMemoryBudget()) return resolve({ ok: false, reason: 'memory' });
    const actor = existing ?? (routing === 'create' ? this.spawn(sessionId, at) : undefined);
    if (!actor) return resolve({ ok: false, reason: routing === 'create' ? 'capacity' : 'not_found' });
    this.markRecent(sessionId, actor);

    // Most replies arrive within `actor.send`: those need no timer, pending entry or settle closures.
    let replied: AskResult<T> | undefined;
    let later: ((result: AskResult<T>) => void) | undefined;
    const command = build((value) => {
      if (later) later({ ok: true, value });
      else replied ??= { ok: true, value };
    }, at);
    const { metrics } = this.options;
    const started = metrics ? stepStarted() : 0;
    actor.send(command);
    if (metrics) observeStep(metrics, command.type, started);
    if (replied) return resolve(replied);
    if (actor.getSnapshot().status === 'error') return resolve({ ok: false, reason: 'failed' });

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
    later = settle;
    // Replies that wait on media calls arrive later; a machine bug must not hang the request.
    let waiting = this.pending.get(actor);
    if (!waiting) this.pending.set(actor, (waiting = new Set()));
    waiting.add(fail);
    timer = this.options.clock.setTimeout(() => fail({ ok: false, reason: 'timeout' }), this.options.askTimeoutMs);
  }

  /**
   * What a session tells the world (a command to the app, a notice to the agent) goes out once the
   * change behind it is committed, as activity items reach the stream: an app told to offer voice
   * by a decision a crash then lost would be offered it again within the cooldown it was shown.
   * Refused (the store failing), it is not sent at all.
   */
  private whenKept(send: () => void): void {
    const { store, activity } = this.options;
    if (store.committedOnWrite && activity.committedOnWrite) return send();
    void this.committed().then((kept) => {
      if (kept) send();
    });
  }

  /** Hear the commands a session's machine decides on (`suggest_start_voice_agent`, `show_popup`) until unsubscribed. */
  subscribe(sessionId: string, listener: (command: AssistantCommand) => void): () => void {
    return this.commandListeners.subscribe(sessionId, listener);
  }

  /** Stop every session actor (shutdown); every session stays in the store. */
  stopAll(): void {
    // Commands asked before the stop are delivered first, as they would have been this turn.
    this.batch.drain();
    for (const [sessionId, actor] of this.sessions) this.unload(sessionId, actor);
    this.sweepTimer.cancel();
    this.wakeTimer.cancel();
    this.options.memoryBudget.clear();
  }

  /**
   * Past the memory budget, what is in memory but not needed there goes first: running sessions
   * with nothing under way hibernate (least recently touched first), which with a durable store
   * takes them out of memory and loses nothing; then, if that is not enough, sessions in voice or
   * waiting on a timer leave memory too (their timers wake them from the store), so a burst of
   * such sessions cannot refuse every new user until their timers end (docs/limits.md). With
   * STORE=memory hibernated sessions are still in memory, so the least recently touched of them
   * are evicted. False if that is not enough.
   */
  private roomInMemoryBudget(): boolean {
    const budget = this.options.memoryBudget;
    if (budget.hasRoom) return true;
    if (this.hibernationFreesMemory) {
      // SESSION_HIBERNATE_SECONDS=0 keeps every session running: then the budget refuses instead.
      const running = this.options.hibernateAfterMs > 0 ? this.sessions : new Map<string, SessionActor>();
      for (const leave of [canHibernate, canLeaveMemory]) {
        for (const [sessionId, actor] of running) {
          if (budget.hasRoom) break;
          this.hibernate(sessionId, actor, leave);
        }
      }
    } else {
      for (const sessionId of this.options.store.leastRecent(this.sessions.size + 64)) {
        if (budget.hasRoom) break;
        if (!this.sessions.has(sessionId)) this.evict(sessionId, 'memory');
      }
    }
    return budget.hasRoom;
  }

  private spawn(sessionId: string, at: number): SessionActor | undefined {
    if (this.size >= this.options.maxSessions && !this.evictLeastRecentInactive()) return undefined;
    this.held += 1;
    return this.run(sessionId, at, undefined);
  }

  /** A session only in the store, running again. */
  private wake(sessionId: string, at: number): SessionActor | undefined {
    const stored = this.loadStored(sessionId);
    if (!stored) return undefined;
    this.options.logger.debug({ session_id: sessionId }, 'session woken');
    return this.run(sessionId, at, stored);
  }

  /** The one place a session enters memory. */
  private run(sessionId: string, at: number, stored: StoredSession | undefined): SessionActor {
    const { clock, inspect, settings } = this.options;
    const actor = createActor(this.options.sessionLogic, {
      // The inspector names each actor by its id: the session id is what an operator looks for.
      id: sessionId,
      input: { sessionId, at, settings, restored: stored ? storedContext(stored) : undefined },
      clock,
      ...(inspect ? { inspect } : {}),
    });
    actor.on('activity', (emitted) => this.forward(sessionId, emitted));
    actor.on('command', (emitted) => this.whenKept(() => this.commandListeners.publish(sessionId, emitted.command)));
    actor.on('agent.notice', (emitted) => this.whenKept(() => this.options.agentNotices?.notify(emitted.room, emitted.notice)));
    actor.on('session.expired', () => this.evict(sessionId, 'idle'));
    const { memoryBudget } = this.options;
    const account = memoryBudget.account(sessionId);
    memoryBudget.charge(account, actor.getSnapshot().context.held_bytes ?? 0);
    // One stored-form reader per actor, not a closure per change: the memory store calls it only when read.
    const storedForm = () => toStored(actor.getSnapshot());
    actor.subscribe({
      next: () => {
        this.changed(sessionId, actor, storedForm);
        // Only while registered: a stopping actor's last snapshot must not count a session gone or hibernated.
        if (this.sessions.get(sessionId) === actor) memoryBudget.charge(account, actor.getSnapshot().context.held_bytes ?? 0);
      },
      error: (error) => this.onSessionError(sessionId, actor, error),
    });
    this.sessions.set(sessionId, actor);
    actor.start();
    // A persisted snapshot keeps no pending timers: the restore re-arms them from the deadlines kept.
    if (stored) actor.send({ type: 'session.restore', at, voice: restoredVoice(stored) });
    this.changed(sessionId, actor, storedForm);
    this.scheduleSweep(at + this.options.hibernateAfterMs);
    return actor;
  }

  /** The one place a session leaves memory (its actor stops); whether it stays in the store is the caller's business. */
  private unload(sessionId: string, actor: SessionActor): void {
    if (this.sessions.get(sessionId) === actor) this.sessions.delete(sessionId);
    this.pending.delete(actor);
    // Stopping from inside the actor's own emission would re-enter it; let the current step finish.
    queueMicrotask(() => actor.stop());
  }

  private changed(sessionId: string, actor: SessionActor, storedForm: () => StoredSession): void {
    if (this.sessions.get(sessionId) !== actor || actor.getSnapshot().status !== 'active') return;
    this.options.store.save(sessionId, storedForm);
  }

  private scheduleSweep(due: number): void {
    // At most one sweep a second: sessions go idle one after another, and each sweep walks the
    // busy ones at the front again. Hibernating a little late costs only memory for a moment.
    if (this.options.hibernateAfterMs <= 0) return;
    this.sweepTimer.schedule(Math.max(due, this.lastSweepAt + SWEEP_MIN_INTERVAL_MS));
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
      if (!this.hibernate(sessionId, actor)) busy = true;
    }
    if (busy) this.scheduleSweep(now + hibernateAfterMs);
  }

  private scheduleWake(at: number | undefined): void {
    if (at !== undefined) this.wakeTimer.schedule(at);
  }

  /**
   * Sessions only in the store whose deadline has come: one that only waited to be evicted is
   * removed without running; any other runs, and its restored timers fire (late ones at once).
   */
  private wakeDue(): void {
    const { store, clock, settings } = this.options;
    const now = clock.now();
    const due = store.dueBy(now, WAKE_BATCH, (sessionId) => this.sessions.has(sessionId));
    for (const sessionId of due) {
      // A timer callback that throws stops the process: one session that cannot wake now waits for the next wake.
      try {
        const stored = this.loadStored(sessionId);
        if (!stored) continue;
        if (stored.summary.last_activity_at + settings.idleTtlMs <= now && isQuiescent(stored, now)) this.evict(sessionId, 'idle');
        else this.run(sessionId, now, stored);
      } catch (error) {
        this.options.logger.error({ err: error, session_id: sessionId }, 'session could not be woken');
      }
    }
    this.scheduleWake(due.length === WAKE_BATCH ? now : store.nextWakeAfter(now));
  }

  private markRecent(sessionId: string, actor: SessionActor): void {
    this.sessions.delete(sessionId);
    this.sessions.set(sessionId, actor);
  }

  /**
   * A session with nothing under way leaves memory for the store (the next command, or its next
   * deadline, brings it back); false, and it stays, when something is under way (voice, cooldown,
   * reengagement, a reply pending). Under memory pressure `may` is `canLeaveMemory`, which lets
   * voice and timers go too.
   */
  private hibernate(sessionId: string, actor: SessionActor, may: (snapshot: SessionSnapshot) => boolean = canHibernate): boolean {
    const snapshot = actor.getSnapshot();
    if (!may(snapshot) || (this.pending.get(actor)?.size ?? 0) > 0) return false;
    const stored = toStored(snapshot, true);
    this.options.store.save(sessionId, () => stored);
    this.unload(sessionId, actor);
    if (this.hibernationFreesMemory) this.options.memoryBudget.close(sessionId);
    this.scheduleWake(stored.wake_at ?? undefined);
    this.options.logger.debug({ session_id: sessionId }, 'session hibernated');
    return true;
  }

  /** With a durable store a hibernated session is on disk only; the memory store keeps it in this process. */
  private get hibernationFreesMemory(): boolean {
    return this.options.store.health().kind !== 'memory';
  }

  private evictLeastRecentInactive(): boolean {
    // Hibernated sessions go first: nothing is under way in them, and they have been untouched
    // longest, bar a running one that a cooldown or reengagement timer kept from hibernating.
    for (const sessionId of this.options.store.leastRecent(this.sessions.size + 1)) {
      if (this.sessions.has(sessionId)) continue;
      this.evict(sessionId, 'capacity');
      return true;
    }
    for (const [sessionId, actor] of this.sessions) {
      if (actor.getSnapshot().matches({ voice: 'inactive' })) {
        this.evict(sessionId, 'capacity');
        return true;
      }
    }
    return false;
  }

  private forward(sessionId: string, emitted: Extract<SessionEmitted, { type: 'activity' }>): void {
    // A throw inside an actor.on listener would escape to the process: contain it here.
    try {
      this.options.activity.append(emitted.draft);
    } catch (error) {
      this.options.logger.error({ err: error, session_id: sessionId }, 'activity record failed');
    }
  }

  private onSessionError(sessionId: string, actor: SessionActor, error: unknown): void {
    this.options.logger.error({ err: error, session_id: sessionId }, 'session actor failed; session discarded');
    for (const fail of this.pending.get(actor) ?? []) fail({ ok: false, reason: 'failed' });
    this.pending.delete(actor);
    if (this.sessions.get(sessionId) !== actor) return;
    this.sessions.delete(sessionId);
    this.discard(sessionId);
  }

  /** Every eviction comes here, of a running session or a hibernated one: it is unloaded and discarded. */
  private evict(sessionId: string, why: 'idle' | 'capacity' | 'memory'): void {
    const actor = this.sessions.get(sessionId);
    if (actor) this.unload(sessionId, actor);
    else if (!this.loadStored(sessionId)) return;
    this.discard(sessionId);
    this.options.logger.debug({ session_id: sessionId, why }, 'session evicted');
  }

  /**
   * A session only in the store, as it can run again: one whose stored form cannot be read back, or whose
   * context is not what the machine needs (stored-session-check.ts), is removed from the store
   * with its reason logged, and is gone as if evicted; a command naming it again begins it anew.
   */
  private loadStored(sessionId: string): StoredSession | undefined {
    let stored: StoredSession | undefined;
    let damage: string | undefined;
    try {
      stored = this.options.store.load(sessionId);
      damage = stored && storedDamage(stored);
    } catch (error) {
      // Only a row the store read and could not make a session is damage; a store that cannot be read now (busy, I/O) keeps it.
      if (!(error instanceof UnreadableSessionError)) throw error;
      damage = error.message;
    }
    if (damage === undefined) return stored;
    this.options.logger.error({ session_id: sessionId, problem: damage }, 'stored session cannot be restored; session discarded');
    this.discard(sessionId);
    return undefined;
  }

  /**
   * A commit failed: what these sessions changed was refused (503), so their running state holds
   * what no client was told of, and saved later it would be kept after all (a retried trigger
   * would find its cooldown already running, a retried start its session already active). Each
   * is dropped from memory; the next command, or its next deadline, finds the state last kept.
   * Its replies still waiting (media work) are refused too.
   */
  private unloadRefused(sessionIds: readonly string[]): void {
    for (const sessionId of sessionIds) {
      const actor = this.sessions.get(sessionId);
      if (!actor) continue;
      for (const fail of [...(this.pending.get(actor) ?? [])]) fail(UNAVAILABLE);
      this.unload(sessionId, actor);
      // A session never kept is gone, as if it had never been begun.
      if (this.options.store.load(sessionId) === undefined) this.uncount(sessionId);
      this.options.logger.warn({ session_id: sessionId }, 'session changes refused by the store; its last kept state stands');
    }
    this.scheduleWake(this.options.store.nextWakeAfter(Number.NEGATIVE_INFINITY));
  }

  /** The session leaves the store and is no longer held: an eviction, a failed session, a damaged row. */
  private discard(sessionId: string): void {
    this.options.store.remove(sessionId);
    this.uncount(sessionId);
  }

  /** The session is no longer held, in memory or in the store: it leaves the budget and the count. */
  private uncount(sessionId: string): void {
    this.options.memoryBudget.close(sessionId);
    this.held -= 1;
  }
}
