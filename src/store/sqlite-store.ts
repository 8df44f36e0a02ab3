/**
 * The SQLite store's group commit: sessions and the activity log in one file, every write of an
 * event-loop turn committed in one transaction, the journal applied to the indexed tables in
 * batches, retention applied with it. Opening the file is sqlite-opening.ts; reading sessions and
 * activity is sqlite-sessions.ts and sqlite-activity.ts, each after what is queued is settled.
 */
import { join, resolve } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import type { ActivityDraft, ActivityItem } from '../domain/activity.js';
import { RecordedTimes, activityItem } from '../domain/activity.js';
import { isoTime } from '../integrations/clock.js';
import type { CallBookOptions, ErasedCounts } from './call-book.js';
import { CallBook } from './call-book.js';
import type { DataDirClaim } from './data-dir-claim.js';
import { ItemReader } from './item-reader.js';
import type {
  ActivityLog,
  ActivityQuery,
  KeptReply,
  SummaryQuery,
  SummarySelection,
  SessionStore,
  Store,
  StoreHealth,
  StoredSession,
} from './ports.js';
import { StoreUnavailableError } from './ports.js';
import { SqliteActivity } from './sqlite-activity.js';
import { SqliteJournal } from './sqlite-journal.js';
import { DATABASE_FILE, StoreOpenError, claimStoreDir, openDatabase } from './sqlite-opening.js';
import { SqliteSessions } from './sqlite-sessions.js';
import type { SqliteStatements } from './sqlite-statements.js';
import { prepare } from './sqlite-statements.js';
import type { WalCheckpointer } from './wal-checkpointer.js';
import { startWalCheckpointer } from './wal-checkpointer.js';

export interface SqliteStoreOptions {
  dataDir: string;
  sync: 'normal' | 'full';
  retentionItems: number;
  /** 0: no age limit. */
  retentionDays: number;
  /** The injected clock's now, for age retention. */
  now: () => number;
  /** Told once of each activity row whose item cannot be read back (it is left out of reads). */
  onUnreadableItem?: (id: number) => void;
  /** How long a named request's reply is kept (REPLAY_WINDOW_SECONDS); 0 or absent: none is. */
  replyKeepMs?: number;
  /** Where calls' webhooks go (docs/reference/webhooks.md); none by default. */
  calls?: CallBookOptions;
}

/** Named requests' replies kept at most, the newest: each at most MAX_KEPT_REPLY_BYTES (docs/reference/limits.md, Replays). */
export const MAX_KEPT_REPLIES = 100_000;

const AGE_PRUNE_INTERVAL_MS = 60_000;
/**
 * Journaled activity items that make the store move them into `activity` after a commit. A larger
 * batch writes each index page once for more rows, but holds the event loop longer while it moves
 * (docs/decisions/0011-group-commit-and-the-journal.md).
 */
export const JOURNAL_APPLY_ITEMS = 2_000;
/**
 * Sessions with journaled rows that make the store apply their newest states (with the items).
 * An apply writes each session once however many rows it has, so its pause grows with the
 * sessions, and a bound on them is a bound on the pause
 * (docs/decisions/0011-group-commit-and-the-journal.md, "Items and sessions apart").
 */
export const JOURNAL_APPLY_SESSIONS = 1_000;
/**
 * Journaled session rows that make the store apply them however few sessions they are of: a bound
 * on the journal's size.
 */
export const JOURNAL_APPLY_SESSION_ROWS = 2_000;
const AGE_PRUNE_BATCH = 10_000;
const DAY_MS = 86_400_000;

/**
 * Sessions and the activity log in one SQLite file (`node:sqlite`, WAL). Writes are queued and
 * committed together once per event-loop turn (group commit): one transaction, one WAL write, for
 * every request that changed something in that turn, and each request is answered after its
 * batch commits. A commit appends to the journal (sqlite-journal.ts); the journal is applied to
 * the indexed tables when its items, its sessions or their rows reach a bound (`JOURNAL_APPLY_*`),
 * before any read that needs them, at close, and at start-up (what a crash left in it). Reads see
 * the queued writes: loading a session reads its queued state, any other read commits what is
 * queued and applies the journal first.
 *
 * Activity ids are the table's AUTOINCREMENT ids, given here (one writer) so that an item has its
 * id when recorded; listeners hear of an item only once it is committed, so no id ever seen can be
 * given again after a crash.
 */
export class SqliteStore implements SessionStore, ActivityLog {
  readonly file: string;
  readonly db: DatabaseSync;
  private readonly statements: SqliteStatements;
  private readonly journal: SqliteJournal;
  readonly checkpointer: WalCheckpointer;
  /** This store's hold on its DATA_DIR, released when it closes (data-dir-claim.ts). */
  private readonly claim: DataDirClaim;
  private readonly saves = new Map<string, () => StoredSession>();
  /** Replies to named requests, committed with the changes they answer. */
  private replies = new Map<string, KeptReply & { at: number }>();
  private lastReplyPrune = Number.NEGATIVE_INFINITY;
  private readonly removals = new Set<string>();
  private items: ActivityItem[] = [];
  /** Each queued item's time in epoch ms, as its ISO timestamp reads (kept, not parsed back at commit). */
  private itemTimes: number[] = [];
  /** The commit every caller of `commit()` in the queued group waits on. */
  private group: PromiseWithResolvers<void> | undefined;
  private readonly scheduled = { commit: false, apply: false };
  /** Sessions that left memory with a save still queued: the journal forgets them once it is committed. */
  private readonly leftMemory = new Set<string>();
  private closed = false;
  private readonly listeners = new Set<(item: ActivityItem) => void>();
  private refusedListener: ((sessionIds: readonly string[]) => void) | undefined;
  private lastId: number;
  private readonly times: RecordedTimes;
  private committedId: number;
  private oldestId: number | undefined;
  private lastAgePrune = Number.NEGATIVE_INFINITY;
  private failure: string | undefined;
  private readonly sessionRows: SqliteSessions;
  private readonly activityRows: SqliteActivity;
  /** Calls, consent and the webhook outbox: written in the commit of the items they come from. */
  readonly calls: CallBook;

  constructor(private readonly options: SqliteStoreOptions) {
    this.file = resolve(join(options.dataDir, DATABASE_FILE));
    this.claim = claimStoreDir(options.dataDir);
    // Whatever stops the opening below lets go of the DATA_DIR, so the next attempt is not refused.
    try {
      this.db = openDatabase(this.file, options);
      this.statements = prepare(this.db);
      this.journal = new SqliteJournal(this.db);
      this.sessionRows = new SqliteSessions(this.db, this.statements, this.journal);
      this.calls = new CallBook(this.db, options.calls ?? { webhookUrls: [] });
      this.activityRows = new SqliteActivity(this.statements, new ItemReader(options.onUnreadableItem), () => ({
        oldestId: this.oldestId,
        committedId: this.committedId,
      }));
      this.checkpointer = startWalCheckpointer(this.file);
      // What the last process committed but did not apply (it crashed, or stopped mid-batch).
      this.applyJournal();
      if (this.failure !== undefined) {
        this.db.close();
        // A damaged file is not a full disk: freeing space would change nothing.
        const advice = /malformed|corrupt|not a database/i.test(this.failure)
          ? 'the file is damaged: restore a backup, or recover what it holds with the sqlite3 shell ' +
            '(.recover) into a new file; the journal in it holds what was acknowledged since the last ' +
            'apply'
          : 'free disk space and start again (the journal is kept until it is applied)';
        throw new StoreOpenError(`store: cannot apply the journal of ${this.file}: ${this.failure}; ${advice}`);
      }
    } catch (error) {
      this.claim.release();
      throw error;
    }
    const sequence = this.statements.lastId.get() as { seq: number } | undefined;
    this.lastId = this.committedId = sequence?.seq ?? 0;
    this.oldestId = (this.statements.oldestId.get() as { id: number | null }).id ?? undefined;
    // Times go on from the newest item's, whatever this process's clock says (stepped back since).
    this.times = new RecordedTimes((this.statements.newestTime.get() as { at: number } | undefined)?.at);
  }

  // SessionStore

  load(sessionId: string): StoredSession | undefined {
    // A queued write is the newest state; otherwise the file is. Not committing here keeps a new
    // session's first command (a miss) from cutting the current group short.
    const queued = this.saves.get(sessionId);
    if (queued) return queued();
    if (this.removals.has(sessionId)) return undefined;
    return this.sessionRows.loadCommitted(sessionId);
  }

  save(sessionId: string, snapshot: () => StoredSession): void {
    this.removals.delete(sessionId);
    this.leftMemory.delete(sessionId);
    this.saves.set(sessionId, snapshot);
    this.schedule('commit');
  }

  remove(sessionId: string): void {
    this.saves.delete(sessionId);
    this.removals.add(sessionId);
    this.schedule('commit');
  }

  /** Sessions whose written field objects the journal remembers: the ones in memory, and any whose last save is queued. */
  get rememberedSessions(): number {
    return this.journal.rememberedSessions;
  }

  released(sessionId: string): void {
    // A hibernating session's last save is still queued: its objects are known as written after it.
    if (this.saves.has(sessionId)) this.leftMemory.add(sessionId);
    else this.journal.forget(sessionId);
  }

  holds(sessionId: string): boolean {
    if (this.saves.has(sessionId)) return true;
    if (this.removals.has(sessionId)) return false;
    return this.sessionRows.holdsCommitted(sessionId);
  }

  count(): number {
    this.settle();
    return this.sessionRows.count();
  }

  dueBy(at: number, limit: number, skip: (sessionId: string) => boolean = () => false): string[] {
    this.settle();
    return this.sessionRows.dueBy(at, limit, skip);
  }

  nextWakeAfter(at: number): number | undefined {
    this.settle();
    return this.sessionRows.nextWakeAfter(at);
  }

  leastRecent(): Iterable<string> {
    this.settle();
    return this.sessionRows.leastRecent();
  }

  sessionsOfUser(userId: string): string[] {
    this.settle();
    return (
      this.db.prepare('SELECT session_id FROM sessions WHERE user_id = ?').all(userId) as { session_id: string }[]
    ).map((row) => row.session_id);
  }

  /** The filters and order of `selectSummaries` (summary-selection.ts) in SQL (sqlite-sessions.ts). */
  selectSummaries(query: SummaryQuery): SummarySelection {
    this.settle();
    return this.sessionRows.selectSummaries(query);
  }

  keepReply(requestKey: string, kept: KeptReply): void {
    if (this.replyKeepMs <= 0) return;
    this.replies.set(requestKey, { ...kept, at: this.options.now() });
    this.schedule('commit');
  }

  keptReply(requestKey: string): KeptReply | undefined {
    if (this.replyKeepMs <= 0) return undefined;
    const queued = this.replies.get(requestKey);
    if (queued) return queued;
    const row = this.statements.keptReply.get(requestKey, this.options.now() - this.replyKeepMs) as
      KeptReply | undefined;
    return row && { fingerprint: row.fingerprint, reply: row.reply };
  }

  // ActivityLog

  append(draft: ActivityDraft): ActivityItem {
    this.lastId += 1;
    // Whole ms, never before the item ahead of it: the column gets what parsing the timestamp back would give.
    const at = this.times.next(draft.at);
    const item = activityItem(String(this.lastId), isoTime(at), draft);
    this.items.push(item);
    this.itemTimes.push(at);
    this.schedule('commit');
    return item;
  }

  list(query: ActivityQuery): ActivityItem[] {
    this.settle();
    return this.activityRows.list(query);
  }

  after(afterId: number, limit = Number.MAX_SAFE_INTEGER): { items: ActivityItem[]; gap: boolean } {
    this.settle();
    return this.activityRows.after(afterId, limit);
  }

  bounds(): { oldestId: number | undefined; lastId: number } {
    this.settle();
    return { oldestId: this.oldestId, lastId: this.committedId };
  }

  onRecorded(listener: (item: ActivityItem) => void): { unsubscribe(): void } {
    const wrapped = (item: ActivityItem) => listener(item);
    this.listeners.add(wrapped);
    return { unsubscribe: () => this.listeners.delete(wrapped) };
  }

  onRefused(listener: (sessionIds: readonly string[]) => void): void {
    this.refusedListener = listener;
  }

  // Durable

  commit(): Promise<void> {
    if (!this.hasPending())
      return this.failure === undefined ? Promise.resolve() : Promise.reject(new StoreUnavailableError(this.failure));
    // What a failed commit put back is committed in a turn of its own, not only with the next write.
    this.schedule('commit');
    // One promise for the whole group: the asks of a turn share it rather than each making its own.
    return (this.group ??= Promise.withResolvers<void>()).promise;
  }

  health(): StoreHealth {
    return {
      kind: 'sqlite',
      status: this.failure === undefined ? 'ok' : 'failing',
      file: this.file,
      ...(this.failure ? { last_error: this.failure } : {}),
    };
  }

  /**
   * Frees the page cache (up to 32 MiB, `sqlite-opening.ts`): after a flood of sessions the cache
   * is full of pages no one reads, held for good; the heap trim calls this after its collection
   * (src/integrations/heap-trim.ts).
   */
  releaseMemory(): void {
    if (!this.closed) this.db.exec('PRAGMA shrink_memory');
  }

  close(): void {
    if (this.closed) return;
    this.settle();
    this.closed = true;
    this.checkpointer.close();
    this.db.close();
    this.claim.release();
  }

  /** Drops what is queued and closes, as a crash would (tests of restart). */
  abandon(): void {
    this.saves.clear();
    this.removals.clear();
    this.items = [];
    this.itemTimes = [];
    this.group = undefined;
    this.closed = true;
    this.checkpointer.abandon();
    this.db.close();
    // A crash's claim goes with its process.
    this.claim.release();
  }

  /**
   * Erases `userId`: the sessions given (the supervisor has let them go) and every session the
   * store holds for the user, their activity items and the user's own, their calls, transcripts,
   * consent entries and deliveries, in one transaction, then the WAL is emptied into the file so
   * no copy of the rows outlives the erasure there (secure_delete zeroes them in the file:
   * docs/decisions/0029-erasure-in-the-files-bytes.md). `noted` is the erasure's own record.
   */
  eraseUser(
    userId: string,
    sessionIds: readonly string[],
    noted: (removed: ErasedCounts) => { erasureId: string; at: number },
  ): ErasedCounts {
    this.settle();
    const ids = new Set(sessionIds);
    for (const row of this.db.prepare('SELECT session_id FROM sessions WHERE user_id = ?').all(userId) as {
      session_id: string;
    }[])
      ids.add(row.session_id);
    const removed: ErasedCounts = {
      sessions: 0,
      calls: 0,
      transcript_turns: 0,
      consent_records: 0,
      activity_items: 0,
      webhook_deliveries: 0,
    };
    const deleteSession = this.db.prepare('DELETE FROM sessions WHERE session_id = ?');
    const deleteFields = this.db.prepare('DELETE FROM session_fields WHERE session_id = ?');
    const deleteItems = this.db.prepare('DELETE FROM activity WHERE session_id = ?');
    this.db.exec('BEGIN');
    try {
      // The sessions the supervisor let go are removed already: each id counts once, wherever it was.
      removed.sessions = ids.size;
      for (const sessionId of ids) {
        deleteSession.run(sessionId);
        deleteFields.run(sessionId);
        removed.activity_items += Number(deleteItems.run(sessionId).changes);
      }
      // Items that named the user without a session (a trigger evaluation with no session).
      removed.activity_items += Number(
        this.db
          .prepare("DELETE FROM activity WHERE session_id IS NULL AND json_extract(item, '$.user_id') = ?")
          .run(userId).changes,
      );
      // Replies kept for named requests that name the user or their sessions (a voice start's
      // names the session, and its token holds the user): matched as whole JSON strings.
      const deleteReplies = this.db.prepare('DELETE FROM kept_replies WHERE instr(reply, ?) > 0');
      for (const needle of [userId, ...ids]) deleteReplies.run(JSON.stringify(needle));
      Object.assign(removed, this.calls.eraseWithin([...ids], userId));
      const { erasureId, at } = noted(removed);
      this.calls.noteErasure(erasureId, at, removed);
      this.calls.enqueue('user.erased', { erasure_id: erasureId, removed, erased_at: isoTime(at) }, null, at);
      this.db.exec('COMMIT');
    } catch (error) {
      this.rollback();
      throw error;
    }
    this.oldestId = (this.statements.oldestId.get() as { id: number | null }).id ?? undefined;
    // Pages the deletes zeroed are in the WAL; the frames before them still hold the rows. Copied back and truncated, neither is left.
    this.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    return removed;
  }

  private hasPending(): boolean {
    return this.saves.size > 0 || this.removals.size > 0 || this.items.length > 0 || this.replies.size > 0;
  }

  /** Commits what is queued and applies the journal: the tables then hold every write made so far. */
  private settle(): void {
    this.flushNow();
    this.applyJournal();
  }

  /**
   * Moves the journal into the indexed tables and applies retention, in one transaction; `due`
   * leaves the sessions' rows for later unless a bound on them is reached. A failure loses nothing
   * (the journal stays, to be applied next time) and is reported by `health()`.
   */
  private applyJournal(scope: 'all' | 'due' = 'all'): void {
    if (this.closed || this.journal.pending === 0) return;
    let oldestId = this.oldestId;
    let applied: () => void;
    try {
      this.db.exec('BEGIN');
      applied = this.journal.apply(scope === 'due' && !this.sessionsDue());
      oldestId ??= (this.statements.oldestId.get() as { id: number | null }).id ?? undefined;
      // Every committed item is in `activity` now, so the sequence is the newest committed id.
      const newest = (this.statements.lastId.get() as { seq: number } | undefined)?.seq ?? 0;
      const firstKept = newest - this.options.retentionItems + 1;
      if (oldestId !== undefined && oldestId < firstKept) {
        this.statements.pruneBefore.run(firstKept);
        oldestId = firstKept;
      }
      oldestId = this.pruneByAge(oldestId);
      this.db.exec('COMMIT');
      this.checkpointer.committed();
    } catch (error) {
      this.rollback();
      this.failure = `applying the journal failed: ${error instanceof Error ? error.message : String(error)}`;
      return;
    }
    applied();
    this.oldestId = oldestId;
  }

  private rollback(): void {
    try {
      this.db.exec('ROLLBACK');
    } catch {
      // No transaction open: BEGIN itself failed.
    }
  }

  /**
   * Runs a commit or an apply in a later turn of the event loop, once however often it is asked
   * for. An apply gets a turn of its own, so the requests of the commit before it are answered first.
   */
  private schedule(task: 'commit' | 'apply'): void {
    if (this.scheduled[task] || this.closed) return;
    this.scheduled[task] = true;
    setImmediate(() => {
      this.scheduled[task] = false;
      if (task === 'commit') this.flushNow();
      else this.applyJournal('due');
    });
  }

  /** Commits everything queued in one transaction, then tells the waiters and listeners. */
  private flushNow(): void {
    if (this.closed || !this.hasPending()) return;
    const saves = [...this.saves];
    const removals = [...this.removals];
    const leftMemory = [...this.leftMemory];
    this.leftMemory.clear();
    const { items, itemTimes, group, replies } = this;
    this.saves.clear();
    this.removals.clear();
    this.replies = new Map();
    this.items = [];
    this.itemTimes = [];
    this.group = undefined;
    const { journal } = this;
    try {
      this.db.exec('BEGIN');
      for (const sessionId of removals) journal.removeSession(sessionId);
      for (const [, snapshot] of saves) journal.saveSession(snapshot());
      for (let index = 0; index < items.length; index += 1) journal.appendItem(items[index]!, itemTimes[index]!);
      for (const [requestKey, kept] of replies)
        this.statements.keepReply.run(requestKey, kept.fingerprint, kept.reply, kept.at);
      // In the same transaction: a call's report and the outbox rows announcing it are kept with the items, or neither is.
      for (let index = 0; index < items.length; index += 1) this.calls.record(items[index]!, itemTimes[index]!);
      this.db.exec('COMMIT');
    } catch (error) {
      this.rollback();
      journal.discarded();
      for (const sessionId of leftMemory) journal.forget(sessionId);
      // The refused requests' changes are dropped, their sessions' saves with their items (ids and
      // all), since their clients are told to retry: a retry must find the session as it was, not
      // with the refused change already in it. The listener discards those sessions' running state.
      // A removal is kept and tried again: dropping a session changes nothing a client was told.
      for (const sessionId of removals) if (!this.saves.has(sessionId)) this.removals.add(sessionId);
      if (saves.length > 0) this.refusedListener?.(saves.map(([sessionId]) => sessionId));
      this.lastId = this.committedId;
      this.failure = error instanceof Error ? error.message : String(error);
      const unavailable = new StoreUnavailableError(`commit to ${this.file} failed: ${this.failure}`);
      group?.reject(unavailable);
      return;
    }
    journal.committed();
    for (const sessionId of leftMemory) journal.forget(sessionId);
    this.checkpointer.committed();
    this.failure = undefined;
    if (items.length > 0) this.committedId = Number(items.at(-1)!.id);
    group?.resolve();
    for (const item of items) for (const listener of this.listeners) listener(item);
    // Age retention is checked once a minute (docs/explanation/durability.md): writes coming in that long apply the
    // journal even below its bounds, so expired items do not wait on disk for a batch.
    if (journal.pendingItems >= JOURNAL_APPLY_ITEMS || this.sessionsDue() || this.agePruneDue()) this.schedule('apply');
    if (replies.size > 0) this.pruneReplies();
  }

  /**
   * Replies older than `replyKeepMs`, and past the newest MAX_KEPT_REPLIES, leave the file: at
   * most once a minute, each delete over the index on their time (docs/reference/limits.md, Replays).
   */
  private pruneReplies(): void {
    const now = this.options.now();
    if (now - this.lastReplyPrune < AGE_PRUNE_INTERVAL_MS) return;
    this.lastReplyPrune = now;
    try {
      this.statements.pruneRepliesOlder.run(now - this.replyKeepMs);
      this.statements.pruneRepliesOver.run(MAX_KEPT_REPLIES);
    } catch {
      // A reply kept a little longer than it needs: the next prune tries again (a full disk is the commit's to report).
    }
  }

  private get replyKeepMs(): number {
    return this.options.replyKeepMs ?? 0;
  }

  private sessionsDue(): boolean {
    const { journal } = this;
    return (
      journal.journaledSessions >= JOURNAL_APPLY_SESSIONS || journal.pendingSessionRows >= JOURNAL_APPLY_SESSION_ROWS
    );
  }

  private agePruneDue(): boolean {
    return this.options.retentionDays > 0 && this.options.now() - this.lastAgePrune >= AGE_PRUNE_INTERVAL_MS;
  }

  /** Drops items older than ACTIVITY_RETENTION_DAYS, at most once a minute and a batch at a time. */
  private pruneByAge(oldestId: number | undefined): number | undefined {
    if (oldestId === undefined || !this.agePruneDue()) return oldestId;
    const now = this.options.now();
    this.lastAgePrune = now;
    const { changes } = this.statements.pruneOlder.run(AGE_PRUNE_BATCH, now - this.options.retentionDays * DAY_MS);
    if (Number(changes) === 0) return oldestId;
    // More may be due: look again at the next commit rather than in a minute.
    if (Number(changes) === AGE_PRUNE_BATCH) this.lastAgePrune = Number.NEGATIVE_INFINITY;
    return (this.statements.oldestId.get() as { id: number | null }).id ?? undefined;
  }
}

export function openSqliteStore(options: SqliteStoreOptions): Store & { sqlite: SqliteStore } {
  const sqlite = new SqliteStore(options);
  return { sessions: sqlite, activity: sqlite, sqlite, calls: sqlite.calls, erasure: sqlite };
}
