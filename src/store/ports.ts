import type { ActivityDraft, ActivityItem, ActivityKind } from '../domain/activity.js';
import type { CallBook, ErasedCounts } from './call-book.js';

/**
 * The ports behind which the service keeps what it must not lose. Writes are queued and made
 * durable by `commit()`, which resolves once everything queued before the call is stored (a
 * batch: group commit), so a request is answered only after what it changed is kept. Reads are
 * synchronous and see every write queued so far.
 */
export interface Durable {
  /** Resolves when every write queued so far is committed; rejects with StoreUnavailableError when it could not be. */
  commit(): Promise<void>;
  health(): StoreHealth;
  /** Writes what is queued and releases the store (shutdown). */
  close(): void;
  /** Set by a store that keeps each write as it is made (STORE=memory): `commit()` never has anything to wait for. */
  readonly committedOnWrite?: boolean;
}

export interface StoreHealth {
  kind: 'memory' | 'sqlite' | 'redis';
  status: 'ok' | 'failing';
  /** The database file, for the SQLite store. */
  file?: string;
  /** Why the last commit failed, while failing. */
  last_error?: string;
}

/** A write could not be made durable (disk full, I/O error): answer 503 and let the client retry. */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
}

/**
 * A write that went out and got no answer it could be sure of (the connection lost, the answer
 * late, the replicas short): it may have been applied. Answered 503 saying so, never as a refusal,
 * since a refused change must never appear later (docs/decisions/0047-a-write-in-doubt-is-not-a-refusal.md).
 */
export class StoreInDoubtError extends StoreUnavailableError {
  override name = 'StoreInDoubtError';
}

/** How a commit ended: `in_doubt` when its write went out without an answer (StoreInDoubtError). */
export type CommitOutcome = 'kept' | 'refused' | 'in_doubt';

/** What a write in doubt says of itself: in its error, and so in what a cluster handler answers. */
export const MAY_HAVE_BEEN_APPLIED = 'the write went out without an answer, so it may have been applied';

/**
 * A session's stored form was read but cannot be made a session again (a damaged row: not JSON, or
 * not the layout the store writes). The message names the problem, never the stored text, which
 * may hold what a client sent. A store that cannot be read at all throws its own error instead.
 */
export class UnreadableSessionError extends Error {
  override name = 'UnreadableSessionError';
}

/** A session as the store keeps it: the state value and the context as JSON, with the summary a listing needs. */
export interface StoredSession {
  session_id: string;
  /** The machine's state value when saved. */
  value: unknown;
  /** The session context as plain data (JSON-able); what `persistedContext` keeps. */
  context: Record<string, unknown>;
  /** The earliest deadline of any timer the session holds (epoch ms); null when none. */
  wake_at: number | null;
  summary: SessionSummary;
}

/** The columns `GET /api/sessions` lists and filters on. */
export interface SessionSummary {
  user_id: string | null;
  screen: string | null;
  /** The voice region: inactive, starting, active or stopping. */
  voice: string;
  cooldown_until: number | null;
  created_at: number;
  /** When a command last reached the session. */
  last_activity_at: number;
}

/** A session's summary row with its id: what listing sessions reads (GET /api/sessions). */
export type SummaryRow = SessionSummary & { session_id: string };

/** A page of summary rows: filters (`screen` and `q` lower-cased, compared case-insensitively), sort, and the cursor's position. */
export interface SummaryQuery {
  limit: number;
  sort: 'last_activity' | 'session_id';
  order: 'asc' | 'desc';
  /** The last row of the previous page: its sort value and session id. */
  after?: { primary: number | string; id: string } | undefined;
  /** `active`: voice starting, active or stopping. */
  voice?: 'active' | 'inactive' | undefined;
  /** An exact screen. */
  screen?: string | undefined;
  /** Text in the session id, the user id or the screen. */
  q?: string | undefined;
}

export interface SummarySelection {
  rows: SummaryRow[];
  /** How many rows match the filters, over every page. */
  total: number;
  /** Whether rows after this page match too. */
  more: boolean;
}

/** A reply to a request its client named, kept with the change it answers (`SessionStore.keepReply`). */
export interface KeptReply {
  fingerprint: string;
  /** The session's reply, as JSON. */
  reply: string;
}

export interface SessionStore extends Durable {
  load(sessionId: string): StoredSession | undefined;
  /** Gives back what caches a burst filled (SQLite's page cache); what is needed is read again. Absent where nothing is cached. */
  releaseMemory?(): void;
  /** Queues a save; `snapshot` is called when the batch is written, so only the latest state is serialized. */
  save(sessionId: string, snapshot: () => StoredSession): void;
  remove(sessionId: string): void;
  /**
   * The session left memory (hibernated, evicted, dropped): what the store remembers of it to spare
   * rewriting its unchanged parts can go, once its last save is written. Absent where nothing is.
   */
  released?(sessionId: string): void;
  /** Whether the session is held (what is queued included), without reading it back: an eviction needs no more. */
  holds(sessionId: string): boolean;
  count(): number;
  /** Sessions with a deadline at or before `at`, earliest first. */
  dueBy(at: number, limit: number, skip?: (sessionId: string) => boolean): string[];
  /** The earliest deadline after `at`. */
  nextWakeAfter(at: number): number | undefined;
  /**
   * Least recently active first, for eviction at MAX_SESSIONS and past the memory budget: read as
   * it is walked, so a caller that stops at the first it can use reads only what it looked at.
   */
  leastRecent(): Iterable<string>;
  /** The sessions held for `userId` (what is queued included), for an erasure; a store that cannot say has none. */
  sessionsOfUser?(userId: string): string[];
  /** A page of the sessions held, as summary rows (what is queued included): GET /api/sessions. */
  selectSummaries(query: SummaryQuery): SummarySelection;
  /**
   * Hears of each commit that failed, with the sessions whose saves it dropped: what they changed
   * was refused (503) and is not kept, so their running state must not be saved later either. A
   * store whose commits cannot fail (memory) has none.
   */
  onRefused?(listener: (sessionIds: readonly string[]) => void): void;
  /**
   * Set by a store that outlives the process (SQLite): queues the reply to a request its client
   * named, committed in the same transaction as the change it answers (a refused commit drops
   * both). `keptReply` finds it again for `keepMs`, after a restart too (docs/reference/limits.md, Replays).
   */
  keepReply?(requestKey: string, kept: KeptReply): void;
  keptReply?(requestKey: string): KeptReply | undefined;
}

export interface ActivityQuery {
  limit: number;
  sessionId?: string | undefined;
  kind?: ActivityKind | undefined;
}

export interface ActivityLog extends Durable {
  /**
   * Gives the draft its id and queues it; listeners hear of it once committed. `writeKey` names
   * the write where a retried invocation may append the same item again: a log shared by many
   * processes stores one item per key.
   */
  append(draft: ActivityDraft, writeKey?: string): ActivityItem;
  /** The newest items that match, oldest first. */
  list(query: ActivityQuery): ActivityItem[];
  /** Items after `afterId`, oldest first, and whether some after it are no longer held. */
  after(afterId: number, limit?: number): { items: ActivityItem[]; gap: boolean };
  /** `oldestId` undefined while nothing is held; `lastId` is the newest id given (the base before the first). */
  bounds(): { oldestId: number | undefined; lastId: number };
  /** Called for each item once committed, in id order. */
  onRecorded(listener: (item: ActivityItem) => void): { unsubscribe(): void };
  /** Set by a log that must load before it serves (a remote one): resolves once reads are valid. */
  readonly ready?: Promise<void>;
  /** Set by a log written by other processes too: resolves once this process has read every item up to `id`. */
  caughtUp?(id: number): Promise<void>;
  /**
   * Set by a log written by other processes too: writes exactly these items now, outside the queue,
   * all or none, and resolves with the newest id given. When it rejects nothing is left queued, so
   * items of a change that was refused are never written later by another commit. It rejects with
   * StoreInDoubtError when the write went out and may have been applied.
   */
  writeNow?(items: readonly KeyedDraft[]): Promise<number>;
  /** A log every process shares (cluster mode): deletes the items of these sessions or naming this user, for every reader; answers how many. */
  eraseShared?(sessionIds: ReadonlySet<string>, userId: string): Promise<number>;
  /**
   * Set by a log written by other processes too: whether its write connection is up now. A change
   * acknowledged before it is applied (an SDK event sent one-way) is refused while it is not.
   */
  accepting?(): boolean;
  /**
   * Set by a log on a server (Redis): whether the server answers now, within `timeoutMs`. A server
   * that keeps its connections open but does not answer (stopped, swapping) looks `accepting`.
   */
  answers?(timeoutMs: number): Promise<boolean>;
}

/** An item and the key that makes a repeated write of it a no-op. */
export interface KeyedDraft {
  draft: ActivityDraft;
  writeKey: string;
}

/** Erases a user: every session the store holds of theirs and those named, with what hangs off them (DELETE /api/users/{user_id}). */
export interface UserErasure {
  /** `noted` names the erasure and its time once what it removed is known; the erasure's own record is written with them. */
  eraseUser(
    userId: string,
    sessionIds: readonly string[],
    noted: (removed: ErasedCounts) => { erasureId: string; at: number },
  ): ErasedCounts;
}

/** Both ports over one storage: a session's state and the activity it recorded commit together. */
export interface Store {
  sessions: SessionStore;
  activity: ActivityLog;
  /** Calls, consent and webhooks, kept where the activity log is local (docs/explanation/calls.md); absent with a shared log (ACTIVITY_LOG). */
  calls?: CallBook;
  erasure?: UserErasure;
}
