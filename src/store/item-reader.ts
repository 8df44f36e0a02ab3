import type { ActivityItem } from '../domain/activity.js';

/** Distinct unreadable ids reported; past this, damaged rows are still left out but no longer reported one by one. */
const MAX_REPORTED = 1_024;

/**
 * Reads an activity log's rows back as items: the SQLite store's (the item's JSON, id included)
 * and the Redis stream's (the JSON without its id, which is the entry's). The log is written only
 * by this service, but its file or stream outlives the process, and one damaged row must not make
 * the whole log unreadable: every listing, the console's activity view and each SSE catch-up that
 * reached it failed, and on Redis the tail that feeds every stream stopped. A row that is not an
 * item of its own id is left out of the read, and reported once.
 */
export class ItemReader {
  private readonly reported = new Set<number>();

  constructor(private readonly onUnreadable: (id: number) => void = () => {}) {}

  /** The row's item; undefined (reported the first time) when it is not one. The row's id is the item's. */
  read(id: number, json: string): ActivityItem | undefined {
    const parsed = parseObject(json);
    const item = parsed && parsed.id === undefined ? { id: String(id), ...parsed } : parsed;
    if (item && item.id === String(id) && isActivityItem(item)) return item;
    if (this.reported.size < MAX_REPORTED && !this.reported.has(id)) {
      this.reported.add(id);
      this.onUnreadable(id);
    }
    return undefined;
  }

  /** Each row's item, in order, appended to `into`; rows that are not items are left out. */
  readAll(rows: Iterable<{ id: number; item: string }>, into: ActivityItem[] = []): ActivityItem[] {
    for (const row of rows) {
      const item = this.read(row.id, row.item);
      if (item) into.push(item);
    }
    return into;
  }
}

/** The JSON's object; undefined when it is not JSON, or not an object. */
function parseObject(json: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Has the fields every reader of an item uses (the list, the stream, the console). */
function isActivityItem(value: Record<string, unknown>): value is Record<string, unknown> & ActivityItem {
  const { id, kind, timestamp, session_id: sessionId, payload } = value;
  return (
    typeof id === 'string' &&
    typeof kind === 'string' &&
    typeof timestamp === 'string' &&
    (sessionId === null || typeof sessionId === 'string') &&
    typeof payload === 'object' &&
    payload !== null
  );
}
