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
    let item: unknown;
    try {
      item = JSON.parse(json);
    } catch {
      item = undefined;
    }
    if (isItem(item, id)) return item;
    if (this.reported.size < MAX_REPORTED && !this.reported.has(id)) {
      this.reported.add(id);
      this.onUnreadable(id);
    }
    return undefined;
  }
}

function isItem(value: unknown, id: number): value is ActivityItem {
  if (typeof value !== 'object' || value === null) return false;
  const item = value as Partial<Record<keyof ActivityItem, unknown>>;
  return (
    item.id === String(id) &&
    typeof item.kind === 'string' &&
    typeof item.timestamp === 'string' &&
    (item.session_id === null || typeof item.session_id === 'string') &&
    typeof item.payload === 'object' &&
    item.payload !== null
  );
}
