import { createStore } from '@xstate/store';
import { z } from 'zod';
import type { ActivityDraft, ActivityItem, ActivityKind } from '../domain/activity.js';
import { isoTime } from '../integrations/clock.js';
import { ActivityRing } from './activity-ring.js';

export interface ActivityQuery {
  limit: number;
  sessionId?: string | undefined;
  kind?: ActivityKind | undefined;
}

const RecordedSchema = z.object({ item: z.custom<ActivityItem>() });

/**
 * The activity actor: an @xstate/store whose context holds a ring buffer and the last id given.
 * The ring is mutated in place on purpose: copying a 10,000-item array per event would make
 * recording O(n). Subscribers learn of each item through the `recorded` emission.
 */
export function createActivityStore(capacity: number) {
  return createStore({
    context: { lastId: 0, ring: new ActivityRing(capacity) },
    schemas: { emitted: { recorded: RecordedSchema } },
    on: {
      record: (context, event: { draft: ActivityDraft }, enqueue) => {
        const { at, ...rest } = event.draft;
        const id = context.lastId + 1;
        const item: ActivityItem = { id: String(id), timestamp: isoTime(at), ...rest };
        context.ring.push(item);
        enqueue.emit.recorded({ item });
        return { ...context, lastId: id };
      },
    },
  });
}

export type ActivityStore = ReturnType<typeof createActivityStore>;

export function listActivity(store: ActivityStore, query: ActivityQuery): ActivityItem[] {
  const { sessionId, kind } = query;
  return store
    .getSnapshot()
    .context.ring.newest(query.limit, (item) => (sessionId === undefined || item.session_id === sessionId) && (kind === undefined || item.kind === kind));
}

export function activityAfter(store: ActivityStore, afterId: number, limit?: number): { items: ActivityItem[]; gap: boolean } {
  return store.getSnapshot().context.ring.after(afterId, limit);
}

/** The ids the buffer spans: `oldestId` undefined while it is empty; `lastId` 0 before anything is recorded. */
export function activityBounds(store: ActivityStore): { oldestId: number | undefined; lastId: number } {
  const { ring, lastId } = store.getSnapshot().context;
  const oldest = ring.at(0);
  return { oldestId: oldest ? Number(oldest.id) : undefined, lastId };
}
