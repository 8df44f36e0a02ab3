import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { ActivityItem } from '../domain/activity.js';
import type { StoredSession, SummaryRow } from './ports.js';

/**
 * Context fields kept in columns of their own and written only when they changed: a session's
 * screen schemas (up to 256 KiB) and component hints change on a few events, while every event
 * changes the rest. A deployed SDK registers 14 schemas at the start of a session, so rewriting
 * them with each keystroke's event made a durable event cost 3.4 times one on a bench session
 * (BENCHMARKS.md, "Seventh round").
 */
export const APART_FIELDS = ['schemas', 'component_hints'] as const;
export type ApartField = (typeof APART_FIELDS)[number];

/**
 * A session row as read back, from `sessions` or the journal: `state` is null for a journaled
 * removal; an apart field is null when the row left it as the session's row before had it, and
 * when `state` holds it (a session saved before these fields were kept apart).
 */
export type StoredSessionRow = SummaryRow & { state: string | null; wake_at: number | null } & Partial<Record<ApartField, string | null>>;

/**
 * The SQLite store's write-ahead journal: what a group commit writes, and what it leaves for later.
 *
 * A commit appends each saved session (its state and summary columns) and each activity item as
 * one row of a table with no secondary index (`session_journal`, `activity_journal`), so a
 * commit's cost does not depend on where the session's rows sit in the indexes. `apply` moves the
 * journal into `sessions` and `activity` in one transaction: the items in id order, and of each
 * session only its newest state. So a session saved several times while its rows wait is written
 * to the indexed table once, and an index page the batch touches is written once for the batch
 * rather than once per commit (BENCHMARKS.md, "Fifth round"). Rows are final states, not events:
 * replaying the journal at start-up is the same apply, and nothing is recomputed.
 *
 * The `APART_FIELDS` of a state are written only when they are new objects: an object this
 * journal committed for the same session is written as null, "as the session's row before".
 * The session's own state is immutable (an update builds new objects), so the same object is the
 * same content. A session removed is never saved again from its old objects (a new session starts
 * from empty ones, and empty ones are always written), so "the row before" always exists.
 */
export class SqliteJournal {
  private readonly statements: ReturnType<typeof prepare>;
  /** The last session seq given. */
  private seq: number;
  /** Each session with a committed journal row: the seq of its newest. */
  private readonly newest = new Map<string, number>();
  /**
   * Of each apart field, each session with a committed journal row holding it since its last
   * removal: the seq of the newest.
   */
  private readonly newestApart = new Map<ApartField, Map<string, number>>(APART_FIELDS.map((field) => [field, new Map()]));
  /** Apart objects committed, each with the session it was committed for (weak: the session's state owns them). */
  private readonly written = new WeakMap<object, string>();
  private rows = 0;
  /** What the open transaction appended, folded in by `committed`. */
  private staged = emptyStage();

  constructor(db: DatabaseSync) {
    this.statements = prepare(db);
    const head = this.statements.head.get() as { seq: number | null; rows: number };
    this.seq = head.seq ?? 0;
    for (const row of this.statements.newestSeqs.iterate() as Iterable<{ session_id: string; seq: number }>) this.newest.set(row.session_id, row.seq);
    for (const field of APART_FIELDS) {
      const newest = this.newestApart.get(field)!;
      for (const row of this.statements.newestApartSeqs[field].iterate() as Iterable<{ session_id: string; seq: number }>) newest.set(row.session_id, row.seq);
    }
    this.rows = head.rows;
  }

  /** How many committed rows wait to be applied. */
  get pending(): number {
    return this.rows;
  }

  /**
   * The session's newest state when it is still only in the journal, with each apart field the
   * journal holds filled in from the row that last wrote it; undefined when `sessions` has it. An
   * apart field still null is the one in `session_fields`.
   */
  newestRow(sessionId: string): StoredSessionRow | undefined {
    const seq = this.newest.get(sessionId);
    if (seq === undefined) return undefined;
    const row = this.statements.rowAt.get(seq) as unknown as StoredSessionRow;
    if (row.state === null) return row;
    for (const field of APART_FIELDS) {
      const at = this.newestApart.get(field)!.get(sessionId);
      if (row[field] == null && at !== undefined) row[field] = (this.statements.apartAt[field].get(at) as Record<ApartField, string>)[field];
    }
    return row;
  }

  /** Appends a session's state (inside the caller's transaction). */
  saveSession(stored: StoredSession): void {
    const { summary } = stored;
    const sessionId = stored.session_id;
    const { schemas, component_hints: hints, ...rest } = stored.context;
    const seq = this.stage(sessionId);
    this.statements.saveSession.run(
      seq,
      sessionId,
      JSON.stringify({ value: stored.value, context: rest }),
      stored.wake_at,
      summary.user_id,
      summary.screen,
      summary.voice,
      summary.cooldown_until,
      summary.created_at,
      summary.last_activity_at,
      this.apart('schemas', sessionId, seq, schemas),
      this.apart('component_hints', sessionId, seq, hints),
    );
  }

  /** Appends a session's removal: a row with no state (inside the caller's transaction). */
  removeSession(sessionId: string): void {
    this.statements.removeSession.run(this.stage(sessionId), sessionId);
    this.staged.removals.push(sessionId);
  }

  /** Appends an activity item (inside the caller's transaction). */
  appendItem(item: ActivityItem): void {
    this.statements.appendItem.run(Number(item.id), item.kind, Date.parse(item.timestamp), item.session_id, JSON.stringify(item));
    this.staged.rows += 1;
  }

  /** The caller's transaction committed: what it appended is journaled. */
  committed(): void {
    const { staged } = this;
    if (staged.rows === 0) return;
    for (const [sessionId, seq] of staged.sessions) this.newest.set(sessionId, seq);
    // A commit stages a session's removal or its save, never both: the apply must not bring back
    // the fields of a session removed since.
    for (const sessionId of staged.removals) for (const newest of this.newestApart.values()) newest.delete(sessionId);
    for (const { field, sessionId, seq, value } of staged.apart) {
      this.newestApart.get(field)!.set(sessionId, seq);
      if (value !== undefined) this.written.set(value, sessionId);
    }
    this.rows += staged.rows;
    this.staged = emptyStage();
  }

  /** The caller's transaction rolled back: its rows are not in the file. */
  discarded(): void {
    this.seq -= this.staged.sessions.length;
    this.staged = emptyStage();
  }

  /**
   * Moves every row into `sessions` and `activity` and empties the journal, inside the caller's
   * transaction (outside a commit's transaction every row is a committed one). Returns what to
   * call once that transaction commits; nothing changes here if it does not.
   */
  apply(): () => void {
    if (this.rows === 0) return () => {};
    const { statements } = this;
    statements.moveItems.run();
    const newest = JSON.stringify([...this.newest.values()]);
    statements.applyRemovals.run(newest);
    statements.applyFieldRemovals.run(newest);
    statements.applySessions.run(newest);
    // Each field written in this batch, once per session with its newest value; one no row of the
    // batch wrote stays as `session_fields` has it.
    for (const field of APART_FIELDS) {
      const written = this.newestApart.get(field)!;
      if (written.size > 0) statements.applyApart[field].run(JSON.stringify([...written.values()]));
    }
    statements.clearItems.run();
    statements.clearSessions.run();
    return () => {
      this.rows = 0;
      this.newest.clear();
      for (const newest of this.newestApart.values()) newest.clear();
    };
  }

  /** An apart field as the row keeps it: its JSON, or null when this session's rows already hold this very object. */
  private apart(field: ApartField, sessionId: string, seq: number, value: unknown): string | null {
    if (typeof value !== 'object' || value === null) {
      if (value === undefined) return null;
      this.staged.apart.push({ field, sessionId, seq, value: undefined });
      return JSON.stringify(value);
    }
    if (this.written.get(value) === sessionId) return null;
    // Empty ones are shared by new sessions: always written (two bytes), never taken as this session's.
    this.staged.apart.push({ field, sessionId, seq, value: isEmpty(value) ? undefined : value });
    return JSON.stringify(value);
  }

  private stage(sessionId: string): number {
    this.seq += 1;
    this.staged.sessions.push([sessionId, this.seq]);
    this.staged.rows += 1;
    return this.seq;
  }
}

const emptyStage = () => ({
  sessions: [] as [string, number][],
  removals: [] as string[],
  apart: [] as { field: ApartField; sessionId: string; seq: number; value: object | undefined }[],
  rows: 0,
});

function isEmpty(value: object): boolean {
  if (Array.isArray(value)) return value.length === 0;
  for (const key in value) if (Object.hasOwn(value, key)) return false;
  return true;
}

const SUMMARY_COLUMNS = 'session_id, state, wake_at, user_id, screen, voice, cooldown_until, created_at, last_activity_at';
const JOURNAL_COLUMNS = `${SUMMARY_COLUMNS}, ${APART_FIELDS.join(', ')}`;
/** The journal rows a JSON array of seqs names. */
const NAMED = 'seq IN (SELECT value FROM json_each(?))';

function prepare(db: DatabaseSync) {
  return {
    saveSession: db.prepare(`INSERT INTO session_journal (seq, ${JOURNAL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    removeSession: db.prepare('INSERT INTO session_journal (seq, session_id) VALUES (?, ?)'),
    appendItem: db.prepare('INSERT INTO activity_journal (id, kind, at, session_id, item) VALUES (?, ?, ?, ?, ?)'),
    rowAt: db.prepare(`SELECT ${JOURNAL_COLUMNS} FROM session_journal WHERE seq = ?`),
    head: db.prepare(
      `SELECT (SELECT max(seq) FROM session_journal) AS seq,
        (SELECT count(*) FROM session_journal) + (SELECT count(*) FROM activity_journal) AS rows`,
    ),
    newestSeqs: db.prepare('SELECT session_id, max(seq) AS seq FROM session_journal GROUP BY session_id'),
    newestApartSeqs: byApartField((field) =>
      db.prepare(
        `SELECT session_id, max(seq) AS seq FROM session_journal AS j WHERE ${field} IS NOT NULL
          AND seq > coalesce((SELECT max(seq) FROM session_journal WHERE session_id = j.session_id AND state IS NULL), 0) GROUP BY session_id`,
      ),
    ),
    apartAt: byApartField((field) => db.prepare(`SELECT ${field} FROM session_journal WHERE seq = ?`)),
    applyApart: byApartField((field) =>
      db.prepare(
        `INSERT INTO session_fields (session_id, field, value) SELECT session_id, '${field}', ${field} FROM session_journal WHERE ${NAMED}
         ON CONFLICT (session_id, field) DO UPDATE SET value = excluded.value`,
      ),
    ),
    moveItems: db.prepare('INSERT INTO activity (id, kind, at, session_id, item) SELECT id, kind, at, session_id, item FROM activity_journal ORDER BY id'),
    applyRemovals: db.prepare(`DELETE FROM sessions WHERE session_id IN (SELECT session_id FROM session_journal WHERE ${NAMED} AND state IS NULL)`),
    applyFieldRemovals: db.prepare(`DELETE FROM session_fields WHERE session_id IN (SELECT session_id FROM session_journal WHERE ${NAMED} AND state IS NULL)`),
    // `WHERE` before `ON CONFLICT`: SQLite's parser needs it to read an upsert from a SELECT.
    applySessions: db.prepare(
      `INSERT INTO sessions (${SUMMARY_COLUMNS}) SELECT ${SUMMARY_COLUMNS} FROM session_journal WHERE ${NAMED} AND state IS NOT NULL
       ON CONFLICT (session_id) DO UPDATE SET state = excluded.state, wake_at = excluded.wake_at, user_id = excluded.user_id,
         screen = excluded.screen, voice = excluded.voice, cooldown_until = excluded.cooldown_until, last_activity_at = excluded.last_activity_at`,
    ),
    // No WHERE: SQLite empties a table without visiting its rows.
    clearItems: db.prepare('DELETE FROM activity_journal'),
    clearSessions: db.prepare('DELETE FROM session_journal'),
  };
}

const byApartField = (make: (field: ApartField) => StatementSync): Record<ApartField, StatementSync> =>
  Object.fromEntries(APART_FIELDS.map((field) => [field, make(field)])) as Record<ApartField, StatementSync>;
