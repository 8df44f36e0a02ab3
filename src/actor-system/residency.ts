/**
 * Which sessions live in memory: a session untouched for SESSION_HIBERNATE_SECONDS with nothing
 * under way hibernates (its actor stops, it lives only in the store); one sweep timer serves all
 * of them, due when the least recently touched is. One idle timer sends the running sessions their
 * idle checks when due (docs/decisions/0043-the-idle-check-sent-by-the-host.md). One wake timer
 * serves the sessions only in the store, due at the earliest deadline the store holds (an idle
 * eviction, or after a restart any timer a session had). Past MEMORY_BUDGET_MB or MAX_SESSIONS,
 * what is not needed in memory goes first. The registry itself (run, unload, evict) is the
 * supervisor's.
 */
import type { Logger } from 'pino';
import type { AppClock } from '../integrations/clock.js';
import { idleTimerDeadline } from '../domain/idle-timer.js';
import type { SessionSettings } from '../machines/session/session-context.js';
import type { SessionSnapshot } from '../machines/session/machine.js';
import { canHibernate, canLeaveMemory } from '../machines/session/persistence.js';
import { dueIdleCheck } from '../machines/session/presence.js';
import type { SessionStore, StoredSession } from '../store/ports.js';
import type { SessionActor } from './delivery.js';
import { EarliestTimer } from './earliest-timer.js';
import type { MemoryBudget } from './memory-budget.js';
import type { PendingReplies } from './pending-replies.js';
import { isQuiescent, toStored } from './stored-session.js';

const SWEEP_MIN_INTERVAL_MS = 1000;
/** Sessions woken per turn of the wake timer: a restart after long downtime finds many due at once. */
const WAKE_BATCH = 500;
/**
 * At MAX_SESSIONS, the hibernated sessions to evict are read from the store's recency order this
 * many rows at a time, and used one per new session: a read settles the store (a commit and an
 * apply of its journal, sqlite-store.ts), so one per new session made every spawn at the cap two
 * transactions. When a read finds none (that many running sessions, kept by their timers, are
 * older than every hibernated one), the least recently touched inactive running session goes,
 * and the store is not read again for as many new sessions (docs/reference/limits.md, Session count).
 */
export const EVICTION_BATCH = 256;

export type EvictionReason = 'idle' | 'capacity' | 'memory';

export interface ResidencyOptions {
  clock: AppClock;
  logger: Logger;
  store: SessionStore;
  settings: SessionSettings;
  /** SESSION_HIBERNATE_SECONDS in milliseconds; 0 keeps every session running. */
  hibernateAfterMs: number;
  memoryBudget: MemoryBudget;
  /** The running sessions, least recently touched first. */
  running: ReadonlyMap<string, SessionActor>;
  /** How many sessions are held only in the store (hibernated). */
  hibernatedCount(): number;
  pending: PendingReplies<SessionActor>;
  /** The registry's own acts: a session from the store running, leaving memory, evicted, read from the store. */
  run(sessionId: string, at: number, stored: StoredSession): SessionActor;
  unload(sessionId: string, actor: SessionActor): void;
  evict(sessionId: string, why: EvictionReason): void;
  loadStored(sessionId: string): StoredSession | undefined;
}

export class Residency {
  /** Hibernated sessions to evict at MAX_SESSIONS, least recently active first (EVICTION_BATCH). */
  private readonly evictable = new Set<string>();
  /** New sessions at the cap still to make without reading the store, after a read found none to evict. */
  private readsHeldOff = 0;
  private readonly sweepTimer: EarliestTimer;
  private lastSweepAt = Number.NEGATIVE_INFINITY;
  private readonly idleTimer: EarliestTimer;
  private lastIdleCheckAt = Number.NEGATIVE_INFINITY;
  private readonly wakeTimer: EarliestTimer;

  constructor(private readonly options: ResidencyOptions) {
    this.sweepTimer = new EarliestTimer(options.clock, () => this.sweep());
    this.idleTimer = new EarliestTimer(options.clock, () => this.checkIdle());
    this.wakeTimer = new EarliestTimer(options.clock, () => this.wakeDue());
    // Deadlines already past at start fire now, once.
    this.scheduleWake(options.store.nextWakeAfter(Number.NEGATIVE_INFINITY));
  }

  /**
   * Past the memory budget, what is in memory but not needed there goes first: running sessions
   * with nothing under way hibernate (least recently touched first), which with a durable store
   * takes them out of memory and loses nothing; then, if that is not enough, sessions in voice or
   * waiting on a timer leave memory too (their timers wake them from the store), so a burst of
   * such sessions cannot refuse every new user until their timers end (docs/reference/limits.md). With
   * STORE=memory hibernated sessions are still in memory, so the least recently touched of them
   * are evicted. False if that is not enough.
   */
  roomInMemoryBudget(): boolean {
    const { memoryBudget: budget, running } = this.options;
    if (budget.hasRoom) return true;
    if (this.hibernationFreesMemory) {
      // SESSION_HIBERNATE_SECONDS=0 keeps every session running: then the budget refuses instead.
      const candidates = this.options.hibernateAfterMs > 0 ? running : new Map<string, SessionActor>();
      for (const leave of [canHibernate, canLeaveMemory]) {
        for (const [sessionId, actor] of candidates) {
          if (budget.hasRoom) break;
          this.hibernate(sessionId, actor, leave);
        }
      }
    } else {
      for (const sessionId of this.options.store.leastRecent()) {
        if (budget.hasRoom) break;
        if (!running.has(sessionId)) this.options.evict(sessionId, 'memory');
      }
    }
    return budget.hasRoom;
  }

  /**
   * At MAX_SESSIONS, one session makes room for a new one; false if none can. Each spawn at the
   * cap costs a bounded walk, never one over every session held: reading the whole recency order
   * for each one stalled the event loop for seconds once 100,000 were held.
   */
  evictLeastRecentInactive(): boolean {
    const { running } = this.options;
    // Hibernated sessions go first: nothing is under way in them, and they have been untouched
    // longest, bar a running one that a cooldown or reengagement timer kept from hibernating.
    const hibernated = this.leastRecentHibernated();
    if (hibernated !== undefined) {
      this.options.evict(hibernated, 'capacity');
      return true;
    }
    // The running sessions are in recency order too: the first inactive one is among the least recently touched.
    for (const [sessionId, actor] of running) {
      if (actor.getSnapshot().matches({ voice: 'inactive' })) {
        this.options.evict(sessionId, 'capacity');
        return true;
      }
    }
    return false;
  }

  /** A session runs (new, woken or restored): it is no longer one to evict as hibernated. */
  nowRunning(sessionId: string): void {
    this.evictable.delete(sessionId);
  }

  /** A session is no longer held (evicted, failed, damaged). */
  gone(sessionId: string): void {
    this.evictable.delete(sessionId);
  }

  /**
   * The least recently active hibernated session, from the batch read last (EVICTION_BATCH);
   * none when nothing is hibernated (the store is not read) or a read found none.
   */
  private leastRecentHibernated(): string | undefined {
    if (this.options.hibernatedCount() === 0) {
      this.evictable.clear();
      return undefined;
    }
    const kept = this.nextEvictable();
    if (kept !== undefined) return kept;
    if (this.readsHeldOff > 0) {
      this.readsHeldOff -= 1;
      return undefined;
    }
    let looked = 0;
    for (const sessionId of this.options.store.leastRecent()) {
      if (!this.options.running.has(sessionId)) this.evictable.add(sessionId);
      looked += 1;
      if (looked >= EVICTION_BATCH) break;
    }
    if (this.evictable.size === 0) this.readsHeldOff = EVICTION_BATCH;
    return this.nextEvictable();
  }

  private nextEvictable(): string | undefined {
    for (const sessionId of this.evictable) {
      this.evictable.delete(sessionId);
      if (!this.options.running.has(sessionId)) return sessionId;
    }
    return undefined;
  }

  scheduleSweep(due: number): void {
    // At most one sweep a second: sessions go idle one after another, and each sweep walks the
    // busy ones at the front again. Hibernating a little late costs only memory for a moment.
    if (this.options.hibernateAfterMs <= 0) return;
    this.sweepTimer.schedule(Math.max(due, this.lastSweepAt + SWEEP_MIN_INTERVAL_MS));
  }

  /** A running session's idle check is due at `due` (its `idle_timer`'s deadline). */
  scheduleIdleCheck(due: number): void {
    // At most one walk a second, as for the sweep: a check a little late makes eviction late, never early.
    this.idleTimer.schedule(Math.max(due, this.lastIdleCheckAt + SWEEP_MIN_INTERVAL_MS));
  }

  scheduleWake(at: number | undefined): void {
    if (at !== undefined) this.wakeTimer.schedule(at);
  }

  /** Shutdown: no sweep or wake is due any more. */
  cancel(): void {
    this.sweepTimer.cancel();
    this.idleTimer.cancel();
    this.wakeTimer.cancel();
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
    for (const [sessionId, actor] of this.options.running) {
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

  /**
   * Sends its idle check to each running session whose check is due (those kept by something
   * under way re-arm), and arms the timer for the earliest check still to come. The walk takes
   * every running session: one woken by a timer from the store runs out of recency order, so no
   * walk can stop at the first session touched within the TTL. It comes at most once a second, and
   * with hibernation on (the default) only a session kept running by voice or a timer for a whole
   * TTL is due at all (docs/decisions/0043-the-idle-check-sent-by-the-host.md).
   */
  private checkIdle(): void {
    const now = this.options.clock.now();
    this.lastIdleCheckAt = now;
    let next = Number.POSITIVE_INFINITY;
    for (const [sessionId, actor] of this.options.running) {
      const check = dueIdleCheck(actor.getSnapshot().context, now);
      if (check) actor.send(check);
      // An expired session has left the registry (the supervisor evicts it as the check ends it).
      if (this.options.running.get(sessionId) === actor)
        next = Math.min(next, idleTimerDeadline(actor.getSnapshot().context.idle_timer));
    }
    if (next !== Number.POSITIVE_INFINITY) this.scheduleIdleCheck(next);
  }

  /**
   * Sessions only in the store whose deadline has come: one that only waited to be evicted is
   * removed without running; any other runs, and its restored timers fire (late ones at once).
   */
  private wakeDue(): void {
    const { store, clock, settings, running } = this.options;
    const now = clock.now();
    const due = store.dueBy(now, WAKE_BATCH, (sessionId) => running.has(sessionId));
    for (const sessionId of due) {
      // A timer callback that throws stops the process: one session that cannot wake now waits for the next wake.
      try {
        const stored = this.options.loadStored(sessionId);
        if (!stored) continue;
        if (stored.summary.last_activity_at + settings.idleTtlMs <= now && isQuiescent(stored, now))
          this.options.evict(sessionId, 'idle');
        else this.options.run(sessionId, now, stored);
      } catch (error) {
        this.options.logger.error({ err: error, session_id: sessionId }, 'session could not be woken');
      }
    }
    this.scheduleWake(due.length === WAKE_BATCH ? now : store.nextWakeAfter(now));
  }

  /**
   * A session with nothing under way leaves memory for the store (the next command, or its next
   * deadline, brings it back); false, and it stays, when something is under way (voice, cooldown,
   * reengagement, a reply pending). Under memory pressure `may` is `canLeaveMemory`, which lets
   * voice and timers go too.
   */
  private hibernate(
    sessionId: string,
    actor: SessionActor,
    may: (snapshot: SessionSnapshot) => boolean = canHibernate,
  ): boolean {
    const snapshot = actor.getSnapshot();
    if (!may(snapshot) || this.options.pending.has(actor)) return false;
    const stored = toStored(snapshot, true);
    this.options.store.save(sessionId, () => stored);
    this.options.unload(sessionId, actor);
    if (this.hibernationFreesMemory) this.options.memoryBudget.close(sessionId);
    this.scheduleWake(stored.wake_at ?? undefined);
    this.options.logger.debug({ session_id: sessionId }, 'session hibernated');
    return true;
  }

  /** With a durable store a hibernated session is on disk only; the memory store keeps it in this process. */
  private get hibernationFreesMemory(): boolean {
    return this.options.store.health().kind !== 'memory';
  }
}
