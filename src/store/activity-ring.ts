import type { ActivityItem } from '../domain/activity.js';

/**
 * Fixed-capacity buffer of the newest activity items. Ids are consecutive integers, so the
 * item with a given id is found by arithmetic and "everything after id N" costs nothing to locate.
 */
export class ActivityRing {
  private readonly slots: (ActivityItem | undefined)[];
  private count = 0;
  private next = 0;

  constructor(readonly capacity: number) {
    this.slots = new Array<ActivityItem | undefined>(capacity);
  }

  get size(): number {
    return this.count;
  }

  push(item: ActivityItem): void {
    this.slots[this.next] = item;
    this.next = (this.next + 1) % this.capacity;
    if (this.count < this.capacity) this.count += 1;
  }

  /** The i-th oldest item held, 0 being the oldest. */
  at(index: number): ActivityItem | undefined {
    if (index < 0 || index >= this.count) return undefined;
    const start = (this.next - this.count + this.capacity) % this.capacity;
    return this.slots[(start + index) % this.capacity];
  }

  /** Items erased (a user's erasure) stay as holes, so ids still find their slots; reads skip them. */
  erase(match: (item: ActivityItem) => boolean): number {
    let erased = 0;
    for (let index = 0; index < this.count; index += 1) {
      const slot = (this.next - this.count + this.capacity + index) % this.capacity;
      const item = this.slots[slot];
      if (item && !ERASED.has(item) && match(item)) {
        const hole: ActivityItem = {
          id: item.id,
          kind: item.kind,
          timestamp: item.timestamp,
          session_id: null,
          user_id: null,
          payload: {},
          trace: { trace_id: '', request_id: '' },
        };
        ERASED.add(hole);
        this.slots[slot] = hole;
        erased += 1;
      }
    }
    return erased;
  }

  /** Newest first, stopping after `limit` items that pass `keep`. Result is in chronological order. */
  newest(limit: number, keep: (item: ActivityItem) => boolean): ActivityItem[] {
    const picked: ActivityItem[] = [];
    for (let index = this.count - 1; index >= 0 && picked.length < limit; index -= 1) {
      const item = this.at(index)!;
      if (!ERASED.has(item) && keep(item)) picked.push(item);
    }
    return picked.reverse();
  }

  /**
   * Items with an id greater than `afterId`, oldest first (at most `limit` of them), and whether
   * some were already overwritten.
   */
  after(afterId: number, limit = Number.POSITIVE_INFINITY): { items: ActivityItem[]; gap: boolean } {
    const oldest = this.at(0);
    if (!oldest) return { items: [], gap: false };
    const oldestId = Number(oldest.id);
    const startIndex = Math.max(0, afterId + 1 - oldestId);
    const endIndex = Math.min(this.count, startIndex + limit);
    const items: ActivityItem[] = [];
    for (let index = startIndex; index < endIndex; index += 1) {
      const item = this.at(index)!;
      if (!ERASED.has(item)) items.push(item);
    }
    return { items, gap: afterId + 1 < oldestId };
  }
}

/** The holes erasure left. */
const ERASED = new WeakSet<ActivityItem>();
