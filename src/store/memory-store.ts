import type { ActivityDraft, ActivityItem } from '../domain/activity.js';
import { isoTime } from '../integrations/clock.js';
import { ActivityRing } from '../actors/activity-ring.js';
import type { ActivityLog, ActivityQuery, SessionStore, Store, StoreHealth, StoredSession, SummaryQuery, SummaryRow, SummarySelection } from './ports.js';
import { selectSummaries } from './summary-selection.js';
import { WakeIndex } from './wake-index.js';

const COMMITTED = Promise.resolve();
const HEALTH: StoreHealth = { kind: 'memory', status: 'ok' };

/**
 * STORE=memory: nothing survives the process. Sessions held here are the ones not running as
 * actors (hibernated); the Map's order is the order of their last save, least recent first.
 */
export class MemorySessionStore implements SessionStore {
  private readonly sessions = new Map<string, StoredSession>();
  private readonly wake = new WakeIndex((id) => this.sessions.get(id)?.wake_at);

  load(sessionId: string): StoredSession | undefined {
    return this.sessions.get(sessionId);
  }

  save(sessionId: string, snapshot: () => StoredSession): void {
    const stored = snapshot();
    const before = this.sessions.get(sessionId);
    this.sessions.delete(sessionId);
    this.sessions.set(sessionId, stored);
    if (stored.wake_at !== null && stored.wake_at !== before?.wake_at) this.wake.push(sessionId, stored.wake_at, this.sessions.size);
  }

  remove(sessionId: string): void {
    this.sessions.delete(sessionId);
  }

  count(): number {
    return this.sessions.size;
  }

  dueBy(at: number, limit: number, skip: (sessionId: string) => boolean = () => false): string[] {
    return this.wake.takeDue(at, limit, skip);
  }

  nextWakeAfter(at: number): number | undefined {
    const earliest = this.wake.earliest();
    return earliest === undefined ? undefined : Math.max(earliest, at);
  }

  leastRecent(limit: number): string[] {
    const ids: string[] = [];
    for (const [id] of this.sessions) {
      if (ids.length >= limit) break;
      ids.push(id);
    }
    return ids;
  }

  selectSummaries(query: SummaryQuery): SummarySelection {
    const rows = (function* (sessions: Iterable<StoredSession>): Generator<SummaryRow> {
      for (const stored of sessions) yield { session_id: stored.session_id, ...stored.summary };
    })(this.sessions.values());
    return selectSummaries(rows, query);
  }

  commit(): Promise<void> {
    return COMMITTED;
  }

  health(): StoreHealth {
    return HEALTH;
  }

  close(): void {
    this.sessions.clear();
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
  private readonly ring: ActivityRing;
  private readonly listeners = new Set<(item: ActivityItem) => void>();
  private lastId: number;

  constructor(capacity: number, epochMs: number) {
    this.ring = new ActivityRing(capacity);
    this.lastId = epochMs * 1000;
  }

  append(draft: ActivityDraft): ActivityItem {
    const { at, ...rest } = draft;
    this.lastId += 1;
    const item: ActivityItem = { id: String(this.lastId), timestamp: isoTime(at), ...rest };
    this.ring.push(item);
    for (const listener of this.listeners) listener(item);
    return item;
  }

  list(query: ActivityQuery): ActivityItem[] {
    const { sessionId, kind } = query;
    return this.ring.newest(query.limit, (item) => (sessionId === undefined || item.session_id === sessionId) && (kind === undefined || item.kind === kind));
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
}

export function openMemoryStore(activityCapacity: number, epochMs: number): Store {
  return { sessions: new MemorySessionStore(), activity: new MemoryActivityLog(activityCapacity, epochMs) };
}
