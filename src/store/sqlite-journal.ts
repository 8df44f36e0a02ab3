import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { ActivityItem } from '../domain/activity.js';
import type { StoredSession, SummaryRow } from './ports.js';

/** A session row as read back, from `sessions` or the journal: `state` is null for a journaled removal. */
export type StoredSessionRow = SummaryRow & { state: string | null; wake_at: number | null };

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
 */
export class SqliteJournal {
  private readonly statements: ReturnType<typeof prepare>;
  /** The last session seq given. */
  private seq: number;
  /** Each session with a committed journal row: the seq of its newest. */
  private readonly newest = new Map<string, number>();
  private rows = 0;
  /** What the open transaction appended, folded in by `committed`. */
  private staged: { sessions: [string, number][]; rows: number } = { sessions: [], rows: 0 };

  constructor(db: DatabaseSync) {
    this.statements = prepare(db);
    const head = this.statements.head.get() as { seq: number | null; rows: number };
    this.seq = head.seq ?? 0;
    for (const row of this.statements.newestSeqs.iterate() as Iterable<{ session_id: string; seq: number }>) this.newest.set(row.session_id, row.seq);
    this.rows = head.rows;
  }

  /** How many committed rows wait to be applied. */
  get pending(): number {
    return this.rows;
  }

  /** The session's newest state when it is still only in the journal; undefined when `sessions` has it. */
  newestRow(sessionId: string): StoredSessionRow | undefined {
    const seq = this.newest.get(sessionId);
    return seq === undefined ? undefined : (this.statements.rowAt.get(seq) as unknown as StoredSessionRow);
  }

  /** Appends a session's state (inside the caller's transaction). */
  saveSession(stored: StoredSession): void {
    const { summary } = stored;
    const seq = this.stage(stored.session_id);
    this.statements.saveSession.run(
      seq,
      stored.session_id,
      JSON.stringify({ value: stored.value, context: stored.context }),
      stored.wake_at,
      summary.user_id,
      summary.screen,
      summary.voice,
      summary.cooldown_until,
      summary.created_at,
      summary.last_activity_at,
    );
  }

  /** Appends a session's removal: a row with no state (inside the caller's transaction). */
  removeSession(sessionId: string): void {
    this.statements.removeSession.run(this.stage(sessionId), sessionId);
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
    this.rows += staged.rows;
    this.staged = { sessions: [], rows: 0 };
  }

  /** The caller's transaction rolled back: its rows are not in the file. */
  discarded(): void {
    this.seq -= this.staged.sessions.length;
    this.staged = { sessions: [], rows: 0 };
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
    statements.applySessions.run(newest);
    statements.clearItems.run();
    statements.clearSessions.run();
    return () => {
      this.rows = 0;
      this.newest.clear();
    };
  }

  private stage(sessionId: string): number {
    this.seq += 1;
    this.staged.sessions.push([sessionId, this.seq]);
    this.staged.rows += 1;
    return this.seq;
  }
}

const SUMMARY_COLUMNS = 'session_id, state, wake_at, user_id, screen, voice, cooldown_until, created_at, last_activity_at';
/** The journal rows a JSON array of seqs names. */
const NAMED = 'seq IN (SELECT value FROM json_each(?))';

function prepare(db: DatabaseSync) {
  return {
    saveSession: db.prepare(`INSERT INTO session_journal (seq, ${SUMMARY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    removeSession: db.prepare('INSERT INTO session_journal (seq, session_id) VALUES (?, ?)'),
    appendItem: db.prepare('INSERT INTO activity_journal (id, kind, at, session_id, item) VALUES (?, ?, ?, ?, ?)'),
    rowAt: db.prepare(`SELECT ${SUMMARY_COLUMNS} FROM session_journal WHERE seq = ?`),
    head: db.prepare(
      `SELECT (SELECT max(seq) FROM session_journal) AS seq,
        (SELECT count(*) FROM session_journal) + (SELECT count(*) FROM activity_journal) AS rows`,
    ),
    newestSeqs: db.prepare('SELECT session_id, max(seq) AS seq FROM session_journal GROUP BY session_id'),
    moveItems: db.prepare('INSERT INTO activity (id, kind, at, session_id, item) SELECT id, kind, at, session_id, item FROM activity_journal ORDER BY id'),
    applyRemovals: db.prepare(`DELETE FROM sessions WHERE session_id IN (SELECT session_id FROM session_journal WHERE ${NAMED} AND state IS NULL)`),
    // `WHERE` before `ON CONFLICT`: SQLite's parser needs it to read an upsert from a SELECT.
    applySessions: db.prepare(
      `INSERT INTO sessions (${SUMMARY_COLUMNS}) SELECT ${SUMMARY_COLUMNS} FROM session_journal WHERE ${NAMED} AND state IS NOT NULL
       ON CONFLICT (session_id) DO UPDATE SET state = excluded.state, wake_at = excluded.wake_at, user_id = excluded.user_id,
         screen = excluded.screen, voice = excluded.voice, cooldown_until = excluded.cooldown_until, last_activity_at = excluded.last_activity_at`,
    ),
    // No WHERE: SQLite empties a table without visiting its rows.
    clearItems: db.prepare('DELETE FROM activity_journal'),
    clearSessions: db.prepare('DELETE FROM session_journal'),
  } satisfies Record<string, StatementSync>;
}
