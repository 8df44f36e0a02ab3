import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { StatementSync } from 'node:sqlite';
import { DatabaseSync } from 'node:sqlite';
import type { ActivityDraft, ActivityItem, ActivityKind } from '../domain/activity.js';
import { activityItem } from '../domain/activity.js';
import { isoTime } from '../integrations/clock.js';
import type { DataDirClaim } from './data-dir-claim.js';
import { DataDirInUseError, claimDataDir } from './data-dir-claim.js';
import { ACTIVITY_SPAN_BITS, migrate } from './migrations.js';
import { ItemReader } from './item-reader.js';
import { joinContext } from './session-fields.js';
import type { StoredSessionRow } from './sqlite-journal.js';
import { SqliteJournal } from './sqlite-journal.js';
import type { WalCheckpointer } from './wal-checkpointer.js';
import { startWalCheckpointer } from './wal-checkpointer.js';
import type { ActivityLog, ActivityQuery, SummaryQuery, SummaryRow, SummarySelection, SessionStore, Store, StoreHealth, StoredSession } from './ports.js';
import { StoreUnavailableError, UnreadableSessionError } from './ports.js';

export const DATABASE_FILE = 'kyc-assistant.sqlite';

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
}

/** The database cannot be used: start-up stops with this one line. */
export class StoreOpenError extends Error {
  override name = 'StoreOpenError';
}

const AGE_PRUNE_INTERVAL_MS = 60_000;
/**
 * Journal rows (a saved session or an item each) that make the store apply the journal after a
 * commit. A larger batch writes each index page once for more rows, and replaces more of a
 * session's rows with its newest, but holds the event loop longer while it moves
 * (about 30 ms at 2,000 rows when it was set: docs/decisions/0011-group-commit-and-the-journal.md).
 */
export const JOURNAL_APPLY_ROWS = 2_000;
const AGE_PRUNE_BATCH = 10_000;
/** The WAL's size, in pages, at which the main connection checkpoints it itself (64 MiB at 16 KiB). */
export const WAL_BOUND_PAGES = 4_000;
const DAY_MS = 86_400_000;

/**
 * Sessions and the activity log in one SQLite file (`node:sqlite`, WAL). Writes are queued and
 * committed together once per event-loop turn (group commit): one transaction, one WAL write, for
 * every request that changed something in that turn, and each request is answered after its
 * batch commits. A commit appends to the journal (sqlite-journal.ts); the journal is applied to
 * the indexed tables every `JOURNAL_APPLY_ROWS` rows, before any read that needs them, at close,
 * and at start-up (what a crash left in it). Reads see the queued writes: loading a session reads
 * its queued state, any other read commits what is queued and applies the journal first.
 *
 * Activity ids are the table's AUTOINCREMENT ids, given here (one writer) so that an item has its
 * id when recorded; listeners hear of an item only once it is committed, so no id ever seen can be
 * given again after a crash.
 */
export class SqliteStore implements SessionStore, ActivityLog {
  readonly file: string;
  readonly db: DatabaseSync;
  private readonly statements: ReturnType<typeof prepare>;
  private readonly journal: SqliteJournal;
  readonly checkpointer: WalCheckpointer;
  /** This store's hold on its DATA_DIR, released when it closes (data-dir-claim.ts). */
  private readonly claim: DataDirClaim;
  private readonly saves = new Map<string, () => StoredSession>();
  private readonly removals = new Set<string>();
  private items: ActivityItem[] = [];
  /** The commit every caller of `commit()` in the queued group waits on. */
  private group: PromiseWithResolvers<void> | undefined;
  private readonly scheduled = { commit: false, apply: false };
  private closed = false;
  private readonly listeners = new Set<(item: ActivityItem) => void>();
  private refusedListener: ((sessionIds: readonly string[]) => void) | undefined;
  private lastId: number;
  private committedId: number;
  private oldestId: number | undefined;
  private lastAgePrune = Number.NEGATIVE_INFINITY;
  private failure: string | undefined;
  private readonly itemReader: ItemReader;

  constructor(private readonly options: SqliteStoreOptions) {
    this.itemReader = new ItemReader(options.onUnreadableItem);
    this.file = resolve(join(options.dataDir, DATABASE_FILE));
    this.claim = claimStoreDir(options.dataDir);
    // Whatever stops the opening below lets go of the DATA_DIR, so the next attempt is not refused.
    try {
      this.db = openDatabase(this.file, options);
      this.statements = prepare(this.db);
      this.journal = new SqliteJournal(this.db);
      this.checkpointer = startWalCheckpointer(this.file);
      // What the last process committed but did not apply (it crashed, or stopped mid-batch).
      this.applyJournal();
      if (this.failure !== undefined) {
        this.db.close();
        // A damaged file is not a full disk: freeing space would change nothing.
        const advice = /malformed|corrupt|not a database/i.test(this.failure)
          ? 'the file is damaged: restore a backup, or recover what it holds with the sqlite3 shell (.recover) into a new file; the journal in it holds what was acknowledged since the last apply'
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
  }

  // SessionStore

  load(sessionId: string): StoredSession | undefined {
    // A queued write is the newest state; otherwise the file is. Not committing here keeps a new
    // session's first command (a miss) from cutting the current group short.
    const queued = this.saves.get(sessionId);
    if (queued) return queued();
    if (this.removals.has(sessionId)) return undefined;
    const row = this.journal.newestRow(sessionId) ?? (this.statements.loadSession.get(sessionId) as StoredSessionRow | undefined);
    if (!row?.state) return undefined;
    // The fields the journal holds are the newest; the rest are in `session_fields`.
    const fields = this.journal.journaledFields(sessionId);
    for (const { field, value } of this.statements.loadFields.iterate(sessionId) as Iterable<{ field: string; value: string }>) if (!fields.has(field)) fields.set(field, value);
    try {
      return fromRow(row, joinContext(row.state, (key) => fields.get(key)));
    } catch (error) {
      // Its name only: a JSON.parse message quotes the text.
      throw new UnreadableSessionError(error instanceof SyntaxError ? 'stored state is not JSON' : `stored state unreadable (${error instanceof Error ? error.name : typeof error})`);
    }
  }

  save(sessionId: string, snapshot: () => StoredSession): void {
    this.removals.delete(sessionId);
    this.saves.set(sessionId, snapshot);
    this.schedule('commit');
  }

  remove(sessionId: string): void {
    this.saves.delete(sessionId);
    this.removals.add(sessionId);
    this.schedule('commit');
  }

  count(): number {
    this.settle();
    return (this.statements.countSessions.get() as { n: number }).n;
  }

  dueBy(at: number, limit: number, skip: (sessionId: string) => boolean = () => false): string[] {
    this.settle();
    const due: string[] = [];
    for (const row of this.statements.dueSessions.iterate(at) as Iterable<{ session_id: string }>) {
      if (due.length >= limit) break;
      if (!skip(row.session_id)) due.push(row.session_id);
    }
    return due;
  }

  nextWakeAfter(at: number): number | undefined {
    this.settle();
    const row = this.statements.nextWake.get(Number.isFinite(at) ? at : -Number.MAX_SAFE_INTEGER) as { at: number | null };
    return row.at ?? undefined;
  }

  leastRecent(limit: number): string[] {
    this.settle();
    return (this.statements.leastRecent.all(limit) as { session_id: string }[]).map((row) => row.session_id);
  }

  /** The filters and order of `selectSummaries` (summary-selection.ts) in SQL, over the indexed summary columns. */
  selectSummaries(query: SummaryQuery): SummarySelection {
    this.settle();
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (query.voice === 'active') where.push("voice IN ('starting', 'active', 'stopping')");
    if (query.voice === 'inactive') where.push("voice = 'inactive'");
    if (query.screen !== undefined) where.push('lower(screen) = ?') && params.push(query.screen);
    if (query.q !== undefined) {
      where.push("(instr(lower(session_id), ?) > 0 OR instr(lower(coalesce(user_id, '')), ?) > 0 OR instr(lower(coalesce(screen, '')), ?) > 0)");
      params.push(query.q, query.q, query.q);
    }
    const filter = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const { total } = this.db.prepare(`SELECT COUNT(*) AS total FROM sessions ${filter}`).get(...params) as { total: number };
    const column = query.sort === 'last_activity' ? 'last_activity_at' : 'session_id';
    const direction = query.order === 'asc' ? 'ASC' : 'DESC';
    const pageWhere = [...where];
    const pageParams = [...params];
    if (query.after !== undefined) {
      const beyond = query.order === 'asc' ? '>' : '<';
      if (column === 'session_id') pageWhere.push(`session_id ${beyond} ?`) && pageParams.push(query.after.id);
      else pageWhere.push(`(${column} ${beyond} ? OR (${column} = ? AND session_id ${beyond} ?))`) && pageParams.push(query.after.primary, query.after.primary, query.after.id);
    }
    const order = column === 'session_id' ? `session_id ${direction}` : `${column} ${direction}, session_id ${direction}`;
    const sql = `SELECT session_id, user_id, screen, voice, cooldown_until, created_at, last_activity_at FROM sessions ${pageWhere.length ? `WHERE ${pageWhere.join(' AND ')}` : ''} ORDER BY ${order} LIMIT ?`;
    const rows = this.db.prepare(sql).all(...pageParams, query.limit + 1) as unknown as SummaryRow[];
    return { rows: rows.slice(0, query.limit), total, more: rows.length > query.limit };
  }

  // ActivityLog

  append(draft: ActivityDraft): ActivityItem {
    this.lastId += 1;
    const item = activityItem(String(this.lastId), isoTime(draft.at), draft);
    this.items.push(item);
    this.schedule('commit');
    return item;
  }

  list(query: ActivityQuery): ActivityItem[] {
    this.settle();
    const { sessionId, kind, limit } = query;
    if (sessionId !== undefined) return this.listSession(sessionId, kind, limit).reverse();
    const statement = kind !== undefined ? this.statements.newestByKind : this.statements.newest;
    const params = kind !== undefined ? [kind] : [];
    return this.itemReader.readAll(statement.iterate(...params, limit) as Iterable<ItemRow>).reverse();
  }

  /** A session's newest items, newest first: span by span from the newest, as the index keys them (migrations.ts, step 4). */
  private listSession(sessionId: string, kind: ActivityKind | undefined, limit: number): ActivityItem[] {
    const found: ActivityItem[] = [];
    if (this.oldestId === undefined) return found;
    const statement = kind !== undefined ? this.statements.newestBySessionKind : this.statements.newestBySession;
    const oldestSpan = spanOf(this.oldestId);
    for (let span = spanOf(this.committedId); span >= oldestSpan && found.length < limit; span -= 1) {
      const params = kind !== undefined ? [span, sessionId, kind] : [span, sessionId];
      this.itemReader.readAll(statement.iterate(...params, limit - found.length) as Iterable<ItemRow>, found);
    }
    return found;
  }

  after(afterId: number, limit = Number.MAX_SAFE_INTEGER): { items: ActivityItem[]; gap: boolean } {
    this.settle();
    const items = this.itemReader.readAll(this.statements.after.iterate(afterId, limit) as Iterable<ItemRow>);
    return { items, gap: this.oldestId !== undefined && afterId + 1 < this.oldestId };
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
    if (!this.hasPending()) return this.failure === undefined ? Promise.resolve() : Promise.reject(new StoreUnavailableError(this.failure));
    // What a failed commit put back is committed in a turn of its own, not only with the next write.
    this.schedule('commit');
    // One promise for the whole group: the asks of a turn share it rather than each making its own.
    return (this.group ??= Promise.withResolvers<void>()).promise;
  }

  health(): StoreHealth {
    return { kind: 'sqlite', status: this.failure === undefined ? 'ok' : 'failing', file: this.file, ...(this.failure ? { last_error: this.failure } : {}) };
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
    this.group = undefined;
    this.closed = true;
    this.checkpointer.abandon();
    this.db.close();
    // A crash's claim goes with its process.
    this.claim.release();
  }

  private hasPending(): boolean {
    return this.saves.size > 0 || this.removals.size > 0 || this.items.length > 0;
  }

  /** Commits what is queued and applies the journal: the tables then hold every write made so far. */
  private settle(): void {
    this.flushNow();
    this.applyJournal();
  }

  /**
   * Moves the journal into the indexed tables and applies retention, in one transaction. A failure
   * loses nothing (the journal stays, to be applied next time) and is reported by `health()`.
   */
  private applyJournal(): void {
    if (this.closed || this.journal.pending === 0) return;
    let oldestId = this.oldestId;
    let applied: () => void;
    try {
      this.db.exec('BEGIN');
      applied = this.journal.apply();
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
      else this.applyJournal();
    });
  }

  /** Commits everything queued in one transaction, then tells the waiters and listeners. */
  private flushNow(): void {
    if (this.closed || !this.hasPending()) return;
    const saves = [...this.saves];
    const removals = [...this.removals];
    const items = this.items;
    const { group } = this;
    this.saves.clear();
    this.removals.clear();
    this.items = [];
    this.group = undefined;
    const { journal } = this;
    try {
      this.db.exec('BEGIN');
      for (const sessionId of removals) journal.removeSession(sessionId);
      for (const [, snapshot] of saves) journal.saveSession(snapshot());
      for (const item of items) journal.appendItem(item);
      this.db.exec('COMMIT');
    } catch (error) {
      this.rollback();
      journal.discarded();
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
    this.checkpointer.committed();
    this.failure = undefined;
    if (items.length > 0) this.committedId = Number(items.at(-1)!.id);
    group?.resolve();
    for (const item of items) for (const listener of this.listeners) listener(item);
    // Age retention is checked once a minute (docs/durability.md): writes coming in that long apply the
    // journal even below its batch size, so expired items do not wait on disk for 2,000 rows.
    if (journal.pending >= JOURNAL_APPLY_ROWS || this.agePruneDue()) this.schedule('apply');
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

type ItemRow = { id: number; item: string };

function prepare(db: DatabaseSync) {
  const items = (where: string) => db.prepare(`SELECT id, item FROM activity ${where} ORDER BY id DESC LIMIT ?`);
  return {
    loadSession: db.prepare('SELECT * FROM sessions WHERE session_id = ?'),
    loadFields: db.prepare('SELECT field, value FROM session_fields WHERE session_id = ?'),
    countSessions: db.prepare('SELECT count(*) AS n FROM sessions'),
    dueSessions: db.prepare('SELECT session_id FROM sessions WHERE wake_at <= ? ORDER BY wake_at'),
    nextWake: db.prepare('SELECT min(wake_at) AS at FROM sessions WHERE wake_at > ?'),
    leastRecent: db.prepare('SELECT session_id FROM sessions ORDER BY last_activity_at LIMIT ?'),
    newest: items(''),
    newestBySession: items(`WHERE (id >> ${ACTIVITY_SPAN_BITS}) = ? AND session_id = ?`),
    newestByKind: items('WHERE kind = ?'),
    newestBySessionKind: items(`WHERE (id >> ${ACTIVITY_SPAN_BITS}) = ? AND session_id = ? AND kind = ?`),
    after: db.prepare('SELECT id, item FROM activity WHERE id > ? ORDER BY id LIMIT ?'),
    oldestId: db.prepare('SELECT min(id) AS id FROM activity'),
    lastId: db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'activity'"),
    pruneBefore: db.prepare('DELETE FROM activity WHERE id < ?'),
    // Ids follow time: the oldest by age are the lowest ids, so the lowest are looked at (no index
    // on the time to keep up to date per item) and what is left stays contiguous.
    pruneOlder: db.prepare('DELETE FROM activity WHERE id IN (SELECT id FROM activity ORDER BY id LIMIT ?) AND at < ?'),
  } satisfies Record<string, StatementSync>;
}

/** The span of 2^ACTIVITY_SPAN_BITS ids an activity id is in (ids stay below 2^53, so no 32-bit shift). */
const spanOf = (id: number): number => Math.floor(id / 2 ** ACTIVITY_SPAN_BITS);

function fromRow(row: StoredSessionRow, { value, context }: { value: unknown; context: Record<string, unknown> }): StoredSession {
  return {
    session_id: row.session_id,
    value,
    context,
    wake_at: row.wake_at,
    summary: {
      user_id: row.user_id,
      screen: row.screen,
      voice: row.voice,
      cooldown_until: row.cooldown_until,
      created_at: row.created_at,
      last_activity_at: row.last_activity_at,
    },
  };
}

/** Creates the DATA_DIR if need be and claims it for this store; any failure is one StoreOpenError saying what to do. */
function claimStoreDir(dataDir: string): DataDirClaim {
  try {
    mkdirSync(dataDir, { recursive: true });
  } catch (error) {
    throw new StoreOpenError(`store: cannot create DATA_DIR ${resolve(dataDir)}: ${reason(error)}; set DATA_DIR to a writable directory`);
  }
  try {
    return claimDataDir(dataDir);
  } catch (error) {
    if (error instanceof DataDirInUseError) throw new StoreOpenError(`store: ${error.message}`);
    throw new StoreOpenError(`store: cannot claim DATA_DIR ${resolve(dataDir)}: ${reason(error)}; fix the permissions of DATA_DIR, or set DATA_DIR elsewhere`);
  }
}

/** Opens, checks and migrates the database; any failure is one StoreOpenError naming the file and what to do. */
function openDatabase(file: string, options: SqliteStoreOptions): DatabaseSync {
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(file);
    db.exec('PRAGMA busy_timeout = 5000');
    // 16 KiB pages for a new file (an existing one keeps its own): a session's state, 1-2 KB, fills
    // a tenth of a page rather than half, so a commit and an apply write fewer pages
    // (a gain at 1,000 sessions, none seen at 20,000: docs/decisions/0012-where-a-durable-request-goes.md). Set before
    // WAL, which fixes the page size.
    db.exec('PRAGMA page_size = 16384');
    db.exec('PRAGMA journal_mode = WAL');
    db.exec(`PRAGMA synchronous = ${options.sync === 'full' ? 'FULL' : 'NORMAL'}`);
    // 32 MiB of page cache: the sessions in use and the newest activity stay in memory.
    db.exec('PRAGMA cache_size = -32768');
    // A worker's connection copies the WAL back (wal-checkpointer.ts); this connection checkpoints
    // only when the WAL reaches 4,000 pages, a bound if the worker falls behind.
    db.exec(`PRAGMA wal_autocheckpoint = ${WAL_BOUND_PAGES}`);
    migrate(db);
    // Reading every table and writing once proves the file is a database this process can use.
    db.prepare('SELECT count(*) FROM sessions').get();
    db.prepare('SELECT count(*) FROM activity').get();
    db.exec('BEGIN IMMEDIATE; COMMIT');
    return db;
  } catch (error) {
    try {
      db?.close();
    } catch {
      // Already unusable; the error below says why.
    }
    const message = reason(error);
    const advice = /not a database|malformed|corrupt/i.test(message)
      ? 'the file is damaged: move it (and its -wal and -shm files) aside to start empty, or restore a backup'
      : /readonly|read-only|unable to open|permission|access/i.test(message)
        ? 'the process cannot write it: fix the permissions of the file and DATA_DIR, or set DATA_DIR elsewhere'
        : /locked|busy/i.test(message)
          ? // Another program (a backup, an sqlite3 shell) holds the file: moving it aside would throw the data away.
            'another program holds a lock on the file (a backup, an sqlite3 shell): let it finish or stop it, then start again; the data is intact'
          : 'move the file aside to start empty, or restore a backup';
    throw new StoreOpenError(`store: cannot use ${file}: ${message}; ${advice}`);
  }
}

const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export function openSqliteStore(options: SqliteStoreOptions): Store & { sqlite: SqliteStore } {
  const sqlite = new SqliteStore(options);
  return { sessions: sqlite, activity: sqlite, sqlite };
}
