import type { ActivityDraft, ActivityItem } from '../domain/activity.js';
import { RecordedTimes, activityItem } from '../domain/activity.js';
import { RecencyMap } from '../domain/recency-map.js';
import { isoTime } from '../integrations/clock.js';
import { DatabaseSync } from 'node:sqlite';
import { ActivityRing } from './activity-ring.js';
import type { CallBookOptions, ErasedCounts } from './call-book.js';
import { CallBook } from './call-book.js';
import { migrate } from './migrations.js';
import type {
  ActivityLog,
  ActivityQuery,
  SessionStore,
  Store,
  StoreHealth,
  StoredSession,
  SummaryQuery,
  SummaryRow,
  SummarySelection,
} from './ports.js';
import { selectSummaries } from './summary-selection.js';
import { WakeIndex } from './wake-index.js';

const COMMITTED = Promise.resolve();
const HEALTH: StoreHealth = { kind: 'memory', status: 'ok' };

/**
 * STORE=memory: nothing survives the process. Sessions held here are the ones not running as
 * actors (hibernated), in the order of their last save, least recent first.
 *
 * A save is queued as its `snapshot` function and made a stored session only when something
 * reads the store: a running session is saved on every event and read almost never, and building
 * its stored form each time was a copy of the whole context per event (git show d1df1cf:docs/benchmark-history.md).
 */
export class MemorySessionStore implements SessionStore {
  readonly committedOnWrite = true;
  /** Least recently saved first: the order `leastRecent` gives (domain/recency-map.ts). */
  private readonly sessions = new RecencyMap<StoredSession>();
  /** Saves not yet read, in the order made; every one is later than any save in `sessions`. */
  private readonly queued = new Map<string, () => StoredSession>();
  private readonly wake = new WakeIndex((id) => this.sessions.get(id)?.wake_at);

  load(sessionId: string): StoredSession | undefined {
    if (this.queued.has(sessionId)) this.settle();
    return this.sessions.get(sessionId);
  }

  save(sessionId: string, snapshot: () => StoredSession): void {
    this.queued.delete(sessionId);
    this.queued.set(sessionId, snapshot);
  }

  remove(sessionId: string): void {
    this.queued.delete(sessionId);
    this.sessions.delete(sessionId);
  }

  holds(sessionId: string): boolean {
    return this.queued.has(sessionId) || this.sessions.has(sessionId);
  }

  count(): number {
    this.settle();
    return this.sessions.size;
  }

  dueBy(at: number, limit: number, skip: (sessionId: string) => boolean = () => false): string[] {
    this.settle();
    return this.wake.takeDue(at, limit, skip);
  }

  nextWakeAfter(at: number): number | undefined {
    this.settle();
    const earliest = this.wake.earliest();
    return earliest === undefined ? undefined : Math.max(earliest, at);
  }

  leastRecent(): Iterable<string> {
    this.settle();
    return this.sessions.keys();
  }

  selectSummaries(query: SummaryQuery): SummarySelection {
    this.settle();
    const rows = (function* (sessions: Iterable<StoredSession>): Generator<SummaryRow> {
      for (const stored of sessions) yield { session_id: stored.session_id, ...stored.summary };
    })(this.sessions.values());
    return selectSummaries(rows, query);
  }

  /** Every queued save made a stored session, in the order saved. */
  private settle(): void {
    if (this.queued.size === 0) return;
    for (const [sessionId, snapshot] of this.queued) {
      const stored = snapshot();
      const before = this.sessions.get(sessionId);
      this.sessions.set(sessionId, stored);
      if (stored.wake_at !== null && stored.wake_at !== before?.wake_at)
        this.wake.push(sessionId, stored.wake_at, this.sessions.size);
    }
    this.queued.clear();
  }

  commit(): Promise<void> {
    return COMMITTED;
  }

  health(): StoreHealth {
    return HEALTH;
  }

  close(): void {
    this.queued.clear();
    this.sessions.clear();
  }

  sessionsOfUser(userId: string): string[] {
    this.settle();
    return [...this.sessions.values()]
      .filter((stored) => stored.summary.user_id === userId)
      .map((stored) => stored.session_id);
  }

  /** Drops every session of `userId` and those named; their ids. */
  eraseUser(userId: string, sessionIds: readonly string[]): string[] {
    this.settle();
    const ids = new Set(sessionIds);
    for (const stored of this.sessions.values()) if (stored.summary.user_id === userId) ids.add(stored.session_id);
    const removed = [...ids].filter((id) => this.sessions.delete(id));
    return removed;
  }
}

/**
 * The activity log in memory: a ring of the newest ACTIVITY_RETENTION_ITEMS items. Ids carry the
 * process epoch: the first is the start time in milliseconds times 1000, plus one. Ids are still
 * consecutive within a process, and a later process starts above every id an earlier one gave
 * (unless it recorded more than 1,000 items per millisecond it ran), so a client resuming with an
 * id from before a restart is told it missed items and gets everything held.
 */
export class MemoryActivityLog implements ActivityLog {
  readonly committedOnWrite = true;
  private readonly ring: ActivityRing;
  private readonly listeners = new Set<(item: ActivityItem) => void>();
  private lastId: number;
  private readonly times = new RecordedTimes();

  constructor(
    capacity: number,
    epochMs: number,
    private readonly calls?: CallBook,
  ) {
    this.ring = new ActivityRing(capacity);
    this.lastId = epochMs * 1000;
  }

  append(draft: ActivityDraft): ActivityItem {
    this.lastId += 1;
    const item = activityItem(String(this.lastId), isoTime(this.times.next(draft.at)), draft);
    this.ring.push(item);
    this.calls?.record(item, draft.at);
    for (const listener of this.listeners) listener(item);
    return item;
  }

  list(query: ActivityQuery): ActivityItem[] {
    const { sessionId, kind } = query;
    return this.ring.newest(
      query.limit,
      (item) =>
        (sessionId === undefined || item.session_id === sessionId) && (kind === undefined || item.kind === kind),
    );
  }

  after(afterId: number, limit?: number): { items: ActivityItem[]; gap: boolean } {
    return this.ring.after(afterId, limit);
  }

  bounds(): { oldestId: number | undefined; lastId: number } {
    const oldest = this.ring.at(0);
    return { oldestId: oldest ? Number(oldest.id) : undefined, lastId: this.lastId };
  }

  onRecorded(listener: (item: ActivityItem) => void): { unsubscribe(): void } {
    // Wrapped, so the same function subscribed twice is two subscriptions.
    const wrapped = (item: ActivityItem) => listener(item);
    this.listeners.add(wrapped);
    return { unsubscribe: () => this.listeners.delete(wrapped) };
  }

  commit(): Promise<void> {
    return COMMITTED;
  }

  health(): StoreHealth {
    return HEALTH;
  }

  close(): void {}

  /** Makes holes of the items of these sessions and of `userId`; how many. */
  erase(sessionIds: ReadonlySet<string>, userId: string): number {
    return this.ring.erase(
      (item) => (item.session_id !== null && sessionIds.has(item.session_id)) || item.user_id === userId,
    );
  }
}

/**
 * STORE=memory keeps calls as the SQLite store does, in a database of its own in memory (the same
 * tables and statements), gone with the process as everything else here.
 */
export function openMemoryStore(
  activityCapacity: number,
  epochMs: number,
  calls: CallBookOptions = { webhookUrls: [] },
): Store {
  const db = new DatabaseSync(':memory:');
  migrate(db);
  const book = new CallBook(db, calls);
  const sessions = new MemorySessionStore();
  const activity = new MemoryActivityLog(activityCapacity, epochMs, book);
  return {
    sessions,
    activity,
    calls: book,
    erasure: {
      eraseUser(userId, sessionIds, noted): ErasedCounts {
        const ids = new Set(sessions.eraseUser(userId, sessionIds));
        for (const id of sessionIds) ids.add(id);
        const removed: ErasedCounts = {
          sessions: ids.size,
          activity_items: activity.erase(ids, userId),
          calls: 0,
          transcript_turns: 0,
          consent_records: 0,
          webhook_deliveries: 0,
        };
        db.exec('BEGIN');
        try {
          Object.assign(removed, book.eraseWithin([...ids], userId));
          const { erasureId, at } = noted(removed);
          book.noteErasure(erasureId, at, removed);
          book.enqueue('user.erased', { erasure_id: erasureId, removed, erased_at: isoTime(at) }, null, at);
          db.exec('COMMIT');
        } catch (error) {
          db.exec('ROLLBACK');
          throw error;
        }
        return removed;
      },
    },
  };
}
