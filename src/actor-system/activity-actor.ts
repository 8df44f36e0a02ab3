import type { StoreEffect, StoreSnapshot } from '@xstate/store';
import { createStore } from '@xstate/store';
import type { Logger } from 'pino';
import type { AnyEventObject, InspectionEvent, Observer } from 'xstate';
import type { ActivityItem, ActivityKind } from '../domain/activity.js';
import { ACTIVITY_KINDS } from '../domain/activity.js';
import type { ActivityLog } from '../store/ports.js';
import { inspectStore } from './store-inspection.js';

/** What a reader is given: each committed item, once, in id order. It must not block: it runs on the live path. */
export type TakeItem = (item: ActivityItem) => void;

/** Where live activity is read from: the SSE hub, the metrics and the flow-graph recorder subscribe here. */
export interface ActivityFeed {
  /** `reader` names the subscriber in the actor's state (the inspector, GET /api/status). */
  subscribe(reader: string, take: TakeItem): { unsubscribe(): void };
}

/** A kind this version does not know (an item another version wrote to a shared log) counts here. */
type KindCounted = ActivityKind | 'other';

interface Reader {
  readonly name: string;
  readonly take: TakeItem;
  /** Items whose delivery threw. */
  failures: number;
}

/** The live tail: what the actor holds. */
export interface ActivityTailContext {
  /** Newest id taken; until an item arrives, the log's last id when the actor started. */
  newestId: number;
  /** Items taken since the actor started. */
  taken: number;
  /** Items given again or out of order (an id at or below `newestId`): not delivered. */
  skipped: number;
  byKind: Record<KindCounted, number>;
  readers: readonly Reader[];
}

type ActivityActorEvent =
  | { type: 'item.committed'; item: ActivityItem }
  | { type: 'reader.attached'; reader: Reader }
  | { type: 'reader.detached'; reader: Reader };

/** The tail as plain data, for the inspector and GET /api/status. */
export interface ActivityTail {
  newest_id: number;
  taken: number;
  skipped: number;
  by_kind: Record<KindCounted, number>;
  /** `reader`, not `name`: a key ending in `name` is masked as a person's name wherever it is shown. */
  readers: { reader: string; failures: number }[];
}

type TailSnapshot = StoreSnapshot<ActivityTailContext>;
type Transition = [TailSnapshot, StoreEffect<never>[]];

/** What the actor holds besides its readers: the store, its snapshot and counters (measured; docs/explanation/activity-actor.md). */
export const ACTIVITY_ACTOR_BYTES = 6 * 1024;
/** One reader's entry, its subscription handle and its closure. */
export const ACTIVITY_READER_BYTES = 256;

export interface ActivityActorOptions {
  log: ActivityLog;
  logger: Logger;
  /** INSPECT: the actor shows in the Stately inspector beside the session actors. */
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void) | undefined;
  /** Told what the actor holds each time it changes (the memory budget). */
  onHeldBytes?: (bytes: number) => void;
}

const FAILURE_LOG_EVERY = 1_000;

/**
 * The activity actor: an `@xstate/store` between the activity log and every reader of live
 * activity. It takes each item the log commits (in every host: the memory log as it appends,
 * SQLite after each commit, Redis as the stream is followed), keeps the live tail's state, and
 * hands the item to each reader in turn. The log stays the source of truth for reads and
 * resumes; this is the live path only.
 *
 * Items are processed one at a time, in id order, each once: an item committed while readers are
 * being given the previous one (a reader that appends) waits for them, and an id at or below the
 * newest one taken is not delivered again. A reader that throws is logged and counted; the others
 * still get the item, and it keeps getting later ones. Readers are called synchronously and never
 * awaited: a reader that cannot keep up must hold or drop on its own terms (the SSE hub caps what
 * each stream may queue and cuts a stream past it).
 *
 * The per-item transition updates the tail in place and returns a result made once, and the
 * event sent is one object reused, so the live path allocates nothing per item while nobody
 * inspects. With an inspector, each item is a fresh event and the inspector is given a copy of
 * the tail (docs/explanation/activity-actor.md).
 */
export class ActivityActor implements ActivityFeed {
  private readonly context: ActivityTailContext;
  private readonly snapshot: TailSnapshot;
  private readonly store;
  private readonly unsubscribeLog: () => void;
  private readonly stopInspecting: () => void;
  private readonly inspected: boolean;
  /** The one `item.committed` event sent while nobody inspects. */
  private readonly reused: { type: 'item.committed'; item: ActivityItem | undefined } = {
    type: 'item.committed',
    item: undefined,
  };
  /** Items committed while readers were being given another. */
  private readonly backlog: ActivityItem[] = [];
  private delivering = false;
  /** The item the current delivery hands out. */
  private current: ActivityItem | undefined;

  constructor(private readonly options: ActivityActorOptions) {
    const byKind = Object.fromEntries([...ACTIVITY_KINDS, 'other'].map((kind) => [kind, 0])) as Record<
      KindCounted,
      number
    >;
    this.context = { newestId: options.log.bounds().lastId, taken: 0, skipped: 0, byKind, readers: [] };
    this.snapshot = { status: 'active', context: this.context, output: undefined, error: undefined };
    const unchanged: Transition = [this.snapshot, []];
    const deliver: StoreEffect<never> = () => this.deliver();
    const delivered: Transition = [this.snapshot, [deliver]];
    this.store = createStore<ActivityTailContext, ActivityActorEvent, never>({
      eventTypes: ['item.committed', 'reader.attached', 'reader.detached'],
      getInitialSnapshot: () => this.snapshot,
      transition: (snapshot, event) => {
        const context = snapshot.context;
        switch (event.type) {
          case 'item.committed': {
            const id = Number(event.item.id);
            if (!(id > context.newestId)) {
              context.skipped += 1;
              return unchanged;
            }
            context.newestId = id;
            context.taken += 1;
            const kind: KindCounted = Object.hasOwn(context.byKind, event.item.kind) ? event.item.kind : 'other';
            context.byKind[kind] += 1;
            this.current = event.item;
            return delivered;
          }
          case 'reader.attached':
            context.readers = [...context.readers, event.reader];
            return unchanged;
          case 'reader.detached':
            context.readers = context.readers.filter((reader) => reader !== event.reader);
            return unchanged;
        }
      },
    });
    this.inspected = options.inspect !== undefined;
    this.stopInspecting = options.inspect
      ? inspectStore(this.store, {
          name: 'activity',
          inspect: options.inspect,
          context: () => this.tail(),
          event: viewOfEvent,
        })
      : () => {};
    this.reportHeld();
    const subscription = options.log.onRecorded((item) => this.take(item));
    this.unsubscribeLog = () => subscription.unsubscribe();
  }

  subscribe(reader: string, take: TakeItem): { unsubscribe(): void } {
    const entry: Reader = { name: reader, take, failures: 0 };
    this.store.send({ type: 'reader.attached', reader: entry });
    this.reportHeld();
    let attached = true;
    return {
      unsubscribe: () => {
        if (!attached) return;
        attached = false;
        this.store.send({ type: 'reader.detached', reader: entry });
        this.reportHeld();
      },
    };
  }

  tail(): ActivityTail {
    const { newestId, taken, skipped, byKind, readers } = this.context;
    return {
      newest_id: newestId,
      taken,
      skipped,
      by_kind: { ...byKind },
      readers: readers.map(({ name, failures }) => ({ reader: name, failures })),
    };
  }

  /** The readers attached, by name, in the order they are given each item. */
  readerNames(): string[] {
    return this.context.readers.map((reader) => reader.name);
  }

  /** Leaves the log; readers get nothing more. */
  stop(): void {
    this.unsubscribeLog();
    this.stopInspecting();
  }

  /** The log's listener: one item committed. */
  private take(item: ActivityItem): void {
    if (this.delivering) {
      this.backlog.push(item);
      return;
    }
    this.delivering = true;
    try {
      this.send(item);
      // Appended while the loop runs: a reader that records something is given it after the item that caused it.
      for (let index = 0; index < this.backlog.length; index += 1) this.send(this.backlog[index]!);
    } finally {
      this.backlog.length = 0;
      this.delivering = false;
    }
  }

  private send(item: ActivityItem): void {
    if (this.inspected) {
      // The inspector reads the event after this turn: it needs one of its own.
      this.store.send({ type: 'item.committed', item });
      return;
    }
    const event = this.reused;
    event.item = item;
    this.store.send(event as { type: 'item.committed'; item: ActivityItem });
    event.item = undefined;
  }

  private deliver(): void {
    const item = this.current!;
    this.current = undefined;
    const { readers } = this.context;
    for (let index = 0; index < readers.length; index += 1) {
      const reader = readers[index]!;
      try {
        reader.take(item);
      } catch (error) {
        this.failed(reader, item, error);
      }
    }
  }

  private failed(reader: Reader, item: ActivityItem, error: unknown): void {
    reader.failures += 1;
    // Logged the first time and then now and again: a reader failing on every item must not flood the log.
    if (reader.failures % FAILURE_LOG_EVERY !== 1) return;
    this.options.logger.error(
      { err: error, reader: reader.name, activity_id: Number(item.id), failures: reader.failures },
      'activity reader failed; the other readers were given the item',
    );
  }

  private reportHeld(): void {
    this.options.onHeldBytes?.(ACTIVITY_ACTOR_BYTES + ACTIVITY_READER_BYTES * this.context.readers.length);
  }
}

/** Reader events name the reader; its function is not the inspector's business. */
function viewOfEvent(event: AnyEventObject): AnyEventObject {
  const reader: unknown = event.reader;
  if (typeof reader !== 'object' || reader === null || !('name' in reader)) return event;
  return { type: event.type, reader: reader.name };
}
