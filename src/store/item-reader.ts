import type { ActivityItem } from '../domain/activity.js';

/** Distinct unreadable ids reported; past this, damaged rows are still left out but no longer reported one by one. */
const MAX_REPORTED = 1_024;

/**
 * Reads an activity row's JSON back as an item. The log is written only by this service, but
 * its file (or stream) outlives the process, and one damaged row must not make the whole log
 * unreadable: every listing, the console's activity view and each SSE catch-up that reached it
 * failed. A row that is not an item with its own id is left out of the read, and reported once.
 */
export class ItemReader {
  private readonly reported = new Set<number>();

  constructor(private readonly onUnreadable: (id: number) => void = () => {}) {}

  read(id: number, json: string): ActivityItem | undefined {
    const item = parseObject(json);
    if (item && item.id === String(id) && isActivityItem(item)) return item;
    if (this.reported.size < MAX_REPORTED && !this.reported.has(id)) {
      this.reported.add(id);
      this.onUnreadable(id);
    }
    return undefined;
  }
}

/** The JSON's object; undefined when it is not JSON, or not an object. */
export function parseObject(json: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Has the fields every reader of an item uses (the list, the stream, the console). */
export function isActivityItem(value: Record<string, unknown>): value is Record<string, unknown> & ActivityItem {
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
