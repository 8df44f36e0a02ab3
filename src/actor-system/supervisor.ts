/**
 * The supervisor: the registry of the session actors running in this process. A session enters
 * memory in `run` and leaves it in `unload`; everything else is delegated: delivery.ts takes a
 * command to its session and waits for the commit, pending-replies.ts holds the replies that come
 * later, residency.ts decides who stays in memory (hibernation, waking, the budgets).
 */
import type { Logger } from 'pino';
import type { InspectionEvent, Observer } from 'xstate';
import { createActor } from 'xstate';
import type { AppClock } from '../integrations/clock.js';
import { idleTimerDeadline } from '../domain/idle-timer.js';
import { RecencyMap } from '../domain/recency-map.js';
import type { SessionContext, SessionSettings } from '../machines/session/session-context.js';
import type {
  AssistantCommand,
  IngestResult,
  Reply,
  SessionCommand,
  SessionEmitted,
} from '../machines/session/machine-events.js';
import type { SessionMachine } from '../machines/session/machine.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import type { ActivityLog, CommitOutcome, SessionStore, StoredSession } from '../store/ports.js';
import { UnreadableSessionError } from '../store/ports.js';
import type { AgentNotices } from './agent-notices.js';
import { CommandListeners } from './command-listeners.js';
import type { SessionActor } from './delivery.js';
import { CommandDelivery, UNAVAILABLE } from './delivery.js';
import type { MemoryBudget } from './memory-budget.js';
import type { ReplyKeeping } from './named-request.js';
import { PendingReplies } from './pending-replies.js';
import type { EvictionReason } from './residency.js';
import { Residency } from './residency.js';
import type { AskFailure, AskResult, Routing, SessionHost } from './session-host.js';
import type { SessionListQuery, SessionPage } from './session-listing.js';
import { flowProgressOf, pageOfSessions } from './session-listing.js';
import { storedDamage } from './stored-session-check.js';
import { restoredVoice, storedContext, storedView, toStored } from './stored-session.js';

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
 * The running sessions are kept in recency order: every routed command moves its session last
 * (domain/recency-map.ts).
 *
 * A session untouched for SESSION_HIBERNATE_SECONDS with nothing under way hibernates: its actor
 * stops and it lives only in the store; the next command brings it back (residency.ts).
 *
 * A session enters memory in `run` and leaves it in `unload` (a failed actor in `onSessionError`); nothing else adds to or takes
 * from the running Map.
 */
export class SessionSupervisor implements SessionHost {
  private readonly sessions = new RecencyMap<SessionActor>();
  private readonly pending: PendingReplies<SessionActor>;
  /** Keyed by id, so hibernation does not drop them. */
  private readonly commandListeners: CommandListeners;
  private held: number;
  private readonly delivery: CommandDelivery;
  private readonly residency: Residency;

  constructor(private readonly options: SupervisorOptions) {
    this.held = options.store.count();
    this.commandListeners = new CommandListeners(options.logger);
    this.pending = new PendingReplies(options.clock, options.askTimeoutMs);
    this.delivery = new CommandDelivery({
      clock: options.clock,
      logger: options.logger,
      store: options.store,
      activity: options.activity,
      metrics: options.metrics,
      pending: this.pending,
      admit: (sessionId, routing, at) => this.admit(sessionId, routing, at),
    });
    this.residency = new Residency({
      clock: options.clock,
      logger: options.logger,
      store: options.store,
      settings: options.settings,
      hibernateAfterMs: options.hibernateAfterMs,
      memoryBudget: options.memoryBudget,
      running: this.sessions,
      hibernatedCount: () => this.held - this.sessions.size,
      pending: this.pending,
      run: (sessionId, at, stored) => this.run(sessionId, at, stored),
      unload: (sessionId, actor) => this.unload(sessionId, actor),
      evict: (sessionId, why) => this.evict(sessionId, why),
      loadStored: (sessionId) => this.loadStored(sessionId),
    });
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

  /**
   * Lets go of every running session of `userId` (DELETE /api/users/{user_id}): each actor stops,
   * its replies still waiting are refused, and it leaves the store and the count. Hibernated ones
   * are the store's to find. The ids let go of.
   */
  eraseUser(userId: string): string[] {
    const erased: string[] = [];
    for (const [sessionId, actor] of [...this.sessions]) {
      if (actor.getSnapshot().context.user_id !== userId) continue;
      this.pending.failAll(actor, { ok: false, reason: 'not_found' });
      this.unload(sessionId, actor);
      this.discard(sessionId);
      erased.push(sessionId);
    }
    for (const sessionId of this.options.store.sessionsOfUser?.(userId) ?? []) {
      if (erased.includes(sessionId)) continue;
      this.discard(sessionId);
      erased.push(sessionId);
    }
    return erased;
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

  /** Applied before it is answered: nothing to gain here from answering earlier. */
  ingest(
    sessionId: string,
    build: (reply: Reply<IngestResult>, at: number) => SessionCommand,
  ): Promise<AskResult<IngestResult>> {
    return this.ask(sessionId, 'create', build);
  }

  /** Delivered with the other commands of this event-loop turn, answered once its change is committed (delivery.ts). */
  ask<T>(
    sessionId: string,
    routing: Routing,
    build: (reply: Reply<T>, at: number) => SessionCommand,
    keeping?: ReplyKeeping<T>,
  ): Promise<AskResult<T>> {
    return this.delivery.ask(sessionId, routing, build, keeping);
  }

  /** Whether everything queued so far, session saves and activity alike, is committed. */
  commitOutcome(): Promise<CommitOutcome> {
    return this.delivery.commitOutcome();
  }

  /** Hear the commands a session's machine decides on (`suggest_start_voice_agent`, `show_popup`) until unsubscribed. */
  subscribe(sessionId: string, listener: (command: AssistantCommand) => void): () => void {
    return this.commandListeners.subscribe(sessionId, listener);
  }

  /** Stop every session actor (shutdown); every session stays in the store. */
  stopAll(): void {
    // Commands asked before the stop are delivered first, as they would have been this turn.
    this.delivery.drain();
    for (const [sessionId, actor] of this.sessions) this.unload(sessionId, actor);
    this.residency.cancel();
    this.options.memoryBudget.clear();
  }

  /** The session a command at `at` goes to: running, woken from the store, or made if `routing` allows and there is room. */
  private admit(sessionId: string, routing: Routing, at: number): SessionActor | AskFailure['reason'] {
    const existing = this.sessions.get(sessionId) ?? this.wake(sessionId, at);
    if (!existing && routing === 'create' && !this.residency.roomInMemoryBudget()) return 'memory';
    const actor = existing ?? (routing === 'create' ? this.spawn(sessionId, at) : undefined);
    if (!actor) return routing === 'create' ? 'capacity' : 'not_found';
    this.markRecent(sessionId, actor);
    return actor;
  }

  private spawn(sessionId: string, at: number): SessionActor | undefined {
    if (this.size >= this.options.maxSessions && !this.residency.evictLeastRecentInactive()) return undefined;
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
    // One listener for every kind: each `on` costs an actor a Set and a bound function, and running
    // sessions' size is what V8 marks past the session cap (docs/reference/limits.md, Session count).
    actor.on('*', (emitted) => this.onEmitted(sessionId, emitted));
    const { memoryBudget } = this.options;
    const account = memoryBudget.account(sessionId);
    const charge = () => {
      const { held_bytes, held_density } = actor.getSnapshot().context;
      memoryBudget.charge(account, held_bytes ?? 0, held_density);
    };
    charge();
    // One stored-form reader per actor, not a closure per change: the memory store calls it only when read.
    const storedForm = () => toStored(actor.getSnapshot());
    actor.subscribe({
      next: () => {
        this.changed(sessionId, actor, storedForm);
        // Only while registered: a stopping actor's last snapshot must not count a session gone or hibernated.
        if (this.sessions.get(sessionId) === actor) charge();
      },
      error: (error) => this.onSessionError(sessionId, actor, error),
    });
    this.sessions.set(sessionId, actor);
    this.residency.nowRunning(sessionId);
    actor.start();
    // A persisted snapshot keeps no pending timers: the restore re-arms them from the deadlines kept.
    if (stored) actor.send({ type: 'session.restore', at, voice: restoredVoice(stored) });
    this.changed(sessionId, actor, storedForm);
    this.residency.scheduleSweep(at + this.options.hibernateAfterMs);
    this.residency.scheduleIdleCheck(idleTimerDeadline(actor.getSnapshot().context.idle_timer));
    return actor;
  }

  /** The one place a session leaves memory (its actor stops); whether it stays in the store is the caller's business. */
  private unload(sessionId: string, actor: SessionActor): void {
    if (this.sessions.get(sessionId) === actor) {
      this.sessions.delete(sessionId);
      this.options.store.released?.(sessionId);
    }
    this.pending.forget(actor);
    // Stopping from inside the actor's own emission would re-enter it; let the current step finish.
    queueMicrotask(() => actor.stop());
  }

  private changed(sessionId: string, actor: SessionActor, storedForm: () => StoredSession): void {
    if (this.sessions.get(sessionId) !== actor || actor.getSnapshot().status !== 'active') return;
    this.options.store.save(sessionId, storedForm);
  }

  private markRecent(sessionId: string, actor: SessionActor): void {
    this.sessions.set(sessionId, actor);
  }

  private onEmitted(sessionId: string, emitted: SessionEmitted): void {
    switch (emitted.type) {
      case 'activity':
        this.forward(sessionId, emitted);
        break;
      case 'command':
        this.delivery.whenKept(() => this.commandListeners.publish(sessionId, emitted.command));
        break;
      case 'agent.joined':
        this.options.metrics?.agentOutcomes.inc({ outcome: 'joined' });
        if (emitted.joinMs !== null) this.options.metrics?.agentJoinDuration.observe(emitted.joinMs / 1000);
        break;
      case 'agent.notice':
        this.delivery.whenKept(() => this.options.agentNotices?.notify(emitted.room, emitted.notice));
        break;
      case 'session.expired':
        this.evict(sessionId, 'idle');
        break;
    }
  }

  private forward(sessionId: string, emitted: Extract<SessionEmitted, { type: 'activity' }>): void {
    // A throw inside an actor.on listener would escape to the process: contain it here.
    try {
      // Stamped when recorded. A command's item is, at the time it was delivered (delivery.ts); a
      // timer's item comes with its due time, kept as `due_at`: it fired now, maybe late.
      const { draft } = emitted;
      if (draft.due_at !== undefined) draft.at = Math.max(draft.at, this.options.clock.now());
      this.options.activity.append(draft);
    } catch (error) {
      this.options.logger.error({ err: error, session_id: sessionId }, 'activity record failed');
    }
  }

  private onSessionError(sessionId: string, actor: SessionActor, error: unknown): void {
    this.options.logger.error({ err: error, session_id: sessionId }, 'session actor failed; session discarded');
    this.pending.failAll(actor, { ok: false, reason: 'failed' });
    if (this.sessions.get(sessionId) !== actor) return;
    this.sessions.delete(sessionId);
    this.discard(sessionId);
  }

  /** Every eviction comes here, of a running session or a hibernated one: it is unloaded and discarded. */
  private evict(sessionId: string, why: EvictionReason): void {
    const actor = this.sessions.get(sessionId);
    if (actor) this.unload(sessionId, actor);
    // Whether it is held, not its state: reading and parsing it was most of an eviction's cost at the cap.
    else if (!this.options.store.holds(sessionId)) return;
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
    this.options.logger.error(
      { session_id: sessionId, problem: damage },
      'stored session cannot be restored; session discarded',
    );
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
      this.pending.failAll(actor, UNAVAILABLE);
      this.unload(sessionId, actor);
      // A session never kept is gone, as if it had never been begun.
      if (this.options.store.load(sessionId) === undefined) this.uncount(sessionId);
      this.options.logger.warn(
        { session_id: sessionId },
        'session changes refused by the store; its last kept state stands',
      );
    }
    this.residency.scheduleWake(this.options.store.nextWakeAfter(Number.NEGATIVE_INFINITY));
  }

  /** The session leaves the store and is no longer held: an eviction, a failed session, a damaged row. */
  private discard(sessionId: string): void {
    this.options.store.remove(sessionId);
    this.residency.gone(sessionId);
    this.uncount(sessionId);
  }

  /** The session is no longer held, in memory or in the store: it leaves the budget and the count. */
  private uncount(sessionId: string): void {
    this.options.memoryBudget.close(sessionId);
    this.held -= 1;
  }
}
