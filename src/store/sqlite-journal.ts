import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { LRUCache } from 'lru-cache';
import type { ActivityItem } from '../domain/activity.js';
import type { StoredSession, SummaryRow } from './ports.js';
import { HINT_PREFIX, hintIdsOf, splitContext } from './session-fields.js';

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
 * rather than once per commit (docs/decisions/0011-group-commit-and-the-journal.md). Rows are final states, not events:
 * replaying the journal at start-up is the same apply, and nothing is recomputed.
 *
 * An apply may move the items alone and leave the sessions' rows for one of their own: applying
 * sessions costs what the sessions in the window do, not their rows, so each kind has its own
 * bound (docs/decisions/0011-group-commit-and-the-journal.md, "Items and sessions apart").
 *
 * A session's schemas and each of its component hints are fields beside its state
 * (session-fields.ts), journaled in `field_journal` and applied to `session_fields`, and written
 * only when they are new objects: one this journal committed for the same session is already in
 * its rows. The session's state is immutable (an update builds new objects), so the same object
 * is the same content. A removal deletes the session's journaled fields with it, and a session
 * begun again starts from new objects, so "already in its rows" always holds.
 */
export class SqliteJournal {
  private readonly statements: ReturnType<typeof prepare>;
  /** The last session seq given. */
  private seq: number;
  /** Each session with a committed journal row: the seq of its newest. */
  private readonly newest = new Map<string, number>();
  /** Each session's committed fields in `field_journal`: the row id of each key's newest. */
  private readonly fieldRows = new Map<string, Map<string, number>>();
  /** Of each session saved since the last apply with its hints apart, the component ids of its newest state. */
  private readonly hintIds = new Map<string, string[]>();
  /**
   * Of sessions recently applied with their hints apart, the component ids of their newest state
   * then: every hint row `session_fields` holds for the session is one of them. An apply looks for
   * hints a session dropped only where this cannot rule it out: a session that dropped none since
   * its last apply, and wrote none it does not hold, has no stale row. A session not here (past the
   * bound, or not applied since the store opened) is looked for in SQL. Without it, each apply
   * looked through every hint of every session in it, most of an apply over field sessions
   * (docs/decisions/0013-schemas-and-hints-beside-the-state.md).
   */
  private readonly appliedHints = new LRUCache<string, readonly string[]>({ max: APPLIED_HINTS_KEPT });
  /**
   * Of each session in memory, the field objects committed for it, by key: a save writes only the
   * ones its state no longer holds. A plain Map, dropped when the session leaves memory (`forget`)
   * or the store: a WeakMap keyed by the objects grew by one entry per field of every running
   * session, and V8 grew it in a single call of up to 210 ms
   * (docs/decisions/0042-running-sessions-in-a-linked-order.md).
   */
  private readonly written = new Map<string, Map<string, object>>();
  /** Committed rows waiting: session rows (saves and removals) and activity items. */
  private rows = { sessions: 0, items: 0 };
  /**
   * Whether a session's newest journal row may be a removal: one was committed since the sessions
   * were last applied, or the journal held session rows when the store opened. When not, the apply
   * skips its two removal statements, each a look-up of every journaled session (a session is
   * removed only when it is evicted, so most batches hold none).
   */
  private mayHoldRemovals: boolean;
  /** What the open transaction appended, folded in by `committed`. */
  private staged = emptyStage();

  constructor(db: DatabaseSync) {
    this.statements = prepare(db);
    const head = this.statements.head.get() as { seq: number | null; sessions: number; items: number };
    this.seq = head.seq ?? 0;
    for (const row of this.statements.newestSeqs.iterate() as Iterable<{ session_id: string; seq: number }>)
      this.newest.set(row.session_id, row.seq);
    for (const row of this.statements.newestFields.iterate() as Iterable<{
      session_id: string;
      field: string;
      id: number;
    }>)
      this.fieldsOf(row.session_id).set(row.field, row.id);
    for (const row of this.statements.newestStates.iterate() as Iterable<{ session_id: string; state: string }>) {
      const ids = hintIdsOf(row.state);
      if (ids) this.hintIds.set(row.session_id, ids);
    }
    this.rows = { sessions: head.sessions, items: head.items };
    this.mayHoldRemovals = head.sessions > 0;
  }

  /** How many committed rows wait to be applied. */
  get pending(): number {
    return this.rows.sessions + this.rows.items;
  }

  /** Committed activity items waiting to be moved into `activity`. */
  get pendingItems(): number {
    return this.rows.items;
  }

  /** Committed session rows (saves and removals) waiting to be applied. */
  get pendingSessionRows(): number {
    return this.rows.sessions;
  }

  /** The sessions those rows are of. */
  get journaledSessions(): number {
    return this.newest.size;
  }

  /** The session's newest state when it is still only in the journal; undefined when `sessions` has it. */
  newestRow(sessionId: string): StoredSessionRow | undefined {
    const seq = this.newest.get(sessionId);
    return seq === undefined ? undefined : (this.statements.rowAt.get(seq) as unknown as StoredSessionRow);
  }

  /** Whether the journal's newest row for the session holds it (a removal does not); undefined when the journal has none. */
  holds(sessionId: string): boolean | undefined {
    const seq = this.newest.get(sessionId);
    return seq === undefined ? undefined : (this.statements.heldAt.get(seq) as { held: number }).held === 1;
  }

  /** The JSON of each field the journal holds for the session, by key (newest); what it lacks is in `session_fields`. */
  journaledFields(sessionId: string): Map<string, string> {
    const fields = new Map<string, string>();
    for (const [key, id] of this.fieldRows.get(sessionId) ?? [])
      fields.set(key, (this.statements.fieldAt.get(id) as { value: string }).value);
    return fields;
  }

  /** Appends a session's state, and each of its fields not already in its rows (inside the caller's transaction). */
  saveSession(stored: StoredSession): void {
    const { summary } = stored;
    const sessionId = stored.session_id;
    const split = splitContext(stored.value, stored.context);
    const seq = this.stage(sessionId);
    this.statements.saveSession.run(
      seq,
      sessionId,
      split.state,
      stored.wake_at,
      summary.user_id,
      summary.screen,
      summary.voice,
      summary.cooldown_until,
      summary.created_at,
      summary.last_activity_at,
    );
    const written = this.written.get(sessionId);
    for (const [key, value] of split.fields) {
      const object = typeof value === 'object' && value !== null ? value : undefined;
      if (object && written?.get(key) === object) continue;
      const { lastInsertRowid } = this.statements.saveField.run(seq, sessionId, key, JSON.stringify(value));
      this.staged.fields.push({ sessionId, key, id: Number(lastInsertRowid), object });
    }
    if (split.hintIds) this.staged.hintIds.push([sessionId, split.hintIds]);
  }

  /** Appends a session's removal: a row with no state (inside the caller's transaction). */
  removeSession(sessionId: string): void {
    this.statements.removeSession.run(this.stage(sessionId), sessionId);
    this.statements.removeFields.run(sessionId);
    this.staged.removals.push(sessionId);
  }

  /** Appends an activity item, `at` the epoch ms its timestamp says (inside the caller's transaction). */
  appendItem(item: ActivityItem, at: number): void {
    this.statements.appendItem.run(Number(item.id), item.kind, at, item.session_id, JSON.stringify(item));
    this.staged.items += 1;
  }

  /** The caller's transaction committed: what it appended is journaled. */
  committed(): void {
    const { staged } = this;
    if (staged.sessions.length === 0 && staged.items === 0) return;
    for (const [sessionId, seq] of staged.sessions) this.newest.set(sessionId, seq);
    // A commit stages a session's removal or its save, never both.
    if (staged.removals.length > 0) this.mayHoldRemovals = true;
    for (const sessionId of staged.removals) {
      this.fieldRows.delete(sessionId);
      this.written.delete(sessionId);
      this.hintIds.delete(sessionId);
      // Its rows leave `session_fields` with the apply; saved again before that, it is looked
      // through in SQL, as a session the journal knows nothing of.
      this.appliedHints.delete(sessionId);
    }
    for (const { sessionId, key, id, object } of staged.fields) {
      this.fieldsOf(sessionId).set(key, id);
      if (!object) continue;
      let written = this.written.get(sessionId);
      if (!written) this.written.set(sessionId, (written = new Map<string, object>()));
      written.set(key, object);
    }
    for (const [sessionId, ids] of staged.hintIds) this.hintIds.set(sessionId, ids);
    this.rows.sessions += staged.sessions.length;
    this.rows.items += staged.items;
    this.staged = emptyStage();
  }

  /** The session left memory: a save after it brings new objects, so what was written for it is no use. */
  forget(sessionId: string): void {
    this.written.delete(sessionId);
  }

  /** Sessions whose committed field objects are remembered (`written`). */
  get rememberedSessions(): number {
    return this.written.size;
  }

  /** The caller's transaction rolled back: its rows are not in the file. */
  discarded(): void {
    this.seq -= this.staged.sessions.length;
    this.staged = emptyStage();
  }

  /**
   * Moves the items into `activity` and, unless `itemsOnly`, every session row into `sessions`,
   * emptying what it moved from the journal, inside the caller's transaction (outside a commit's
   * transaction every row is a committed one). Returns what to call once that transaction
   * commits; nothing changes here if it does not.
   */
  apply(itemsOnly = false): () => void {
    const { statements } = this;
    const items = this.rows.items > 0;
    if (items) {
      statements.moveItems.run();
      statements.clearItems.run();
    }
    if (itemsOnly || this.rows.sessions === 0)
      return () => {
        if (items) this.rows.items = 0;
      };
    const newest = JSON.stringify([...this.newest.values()]);
    if (this.mayHoldRemovals) {
      statements.applyRemovals.run(newest);
      statements.applyFieldRemovals.run(newest);
    }
    statements.applySessions.run(newest);
    statements.applySummaries.run(newest);
    // Each field written in this batch, once per session and key with its newest value; one no row
    // of the batch wrote stays as `session_fields` has it.
    const fieldIds: number[] = [];
    for (const fields of this.fieldRows.values()) for (const id of fields.values()) fieldIds.push(id);
    if (fieldIds.length > 0) statements.applyFields.run(JSON.stringify(fieldIds));
    // Hints the sessions no longer hold (replaced past the bound, or trimmed to the budget) leave the file.
    const stale: string[] = [];
    const kept: [string, string][] = [];
    for (const [sessionId, ids] of this.hintIds) {
      if (!this.mayHoldStaleHints(sessionId, ids)) continue;
      stale.push(sessionId);
      for (const id of ids) kept.push([sessionId, HINT_PREFIX + id]);
    }
    if (stale.length > 0) statements.dropStaleHints.run(JSON.stringify(stale), JSON.stringify(kept));
    statements.clearSessions.run();
    statements.clearFields.run();
    return () => {
      for (const [sessionId, ids] of this.hintIds) this.appliedHints.set(sessionId, ids);
      this.rows = { sessions: 0, items: 0 };
      this.mayHoldRemovals = false;
      this.newest.clear();
      this.fieldRows.clear();
      this.hintIds.clear();
    };
  }

  /**
   * Whether `session_fields` may hold a hint of the session its newest state (`ids`) no longer has:
   * unless every hint it held at its last apply, and every hint this batch wrote for it, is still
   * one of `ids`.
   */
  private mayHoldStaleHints(sessionId: string, ids: readonly string[]): boolean {
    const held = this.appliedHints.get(sessionId);
    if (held === undefined) return true;
    const newest = new Set(ids);
    for (const id of held) if (!newest.has(id)) return true;
    for (const key of this.fieldRows.get(sessionId)?.keys() ?? [])
      if (key.startsWith(HINT_PREFIX) && !newest.has(key.slice(HINT_PREFIX.length))) return true;
    return false;
  }

  private fieldsOf(sessionId: string): Map<string, number> {
    let fields = this.fieldRows.get(sessionId);
    if (!fields) this.fieldRows.set(sessionId, (fields = new Map<string, number>()));
    return fields;
  }

  private stage(sessionId: string): number {
    this.seq += 1;
    this.staged.sessions.push([sessionId, this.seq]);
    return this.seq;
  }
}

const emptyStage = () => ({
  sessions: [] as [string, number][],
  removals: [] as string[],
  fields: [] as { sessionId: string; key: string; id: number; object: object | undefined }[],
  hintIds: [] as [string, string[]][],
  items: 0,
});

/**
 * Sessions whose applied hints the journal remembers (a few hundred bytes each): the sessions of
 * the last several applies. One past it costs its apply a look in SQL, as before.
 */
const APPLIED_HINTS_KEPT = 10_000;

const SUMMARY_COLUMNS =
  'session_id, state, wake_at, user_id, screen, voice, cooldown_until, created_at, last_activity_at';
/** The journal rows a JSON array of seqs names. */
const NAMED = 'seq IN (SELECT value FROM json_each(?))';

function prepare(db: DatabaseSync) {
  return {
    saveSession: db.prepare(
      `INSERT INTO session_journal (seq, ${SUMMARY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    saveField: db.prepare('INSERT INTO field_journal (seq, session_id, field, value) VALUES (?, ?, ?, ?)'),
    removeFields: db.prepare('DELETE FROM field_journal WHERE session_id = ?'),
    fieldAt: db.prepare('SELECT value FROM field_journal WHERE id = ?'),
    removeSession: db.prepare('INSERT INTO session_journal (seq, session_id) VALUES (?, ?)'),
    appendItem: db.prepare('INSERT INTO activity_journal (id, kind, at, session_id, item) VALUES (?, ?, ?, ?, ?)'),
    heldAt: db.prepare('SELECT state IS NOT NULL AS held FROM session_journal WHERE seq = ?'),
    rowAt: db.prepare(`SELECT ${SUMMARY_COLUMNS} FROM session_journal WHERE seq = ?`),
    head: db.prepare(
      `SELECT (SELECT max(seq) FROM session_journal) AS seq,
        (SELECT count(*) FROM session_journal) AS sessions, (SELECT count(*) FROM activity_journal) AS items`,
    ),
    newestSeqs: db.prepare('SELECT session_id, max(seq) AS seq FROM session_journal GROUP BY session_id'),
    newestFields: db.prepare('SELECT session_id, field, max(id) AS id FROM field_journal GROUP BY session_id, field'),
    newestStates: db.prepare(
      'SELECT session_id, state FROM session_journal WHERE seq IN (SELECT max(seq) FROM session_journal GROUP BY session_id) AND state IS NOT NULL',
    ),
    applyFields: db.prepare(
      `INSERT INTO session_fields (session_id, field, value) SELECT session_id, field, value FROM field_journal WHERE id IN (SELECT value FROM json_each(?))
       ON CONFLICT (session_id, field) DO UPDATE SET value = excluded.value`,
    ),
    // One pass with the kept (session, field) pairs as a set, rather than a list per session per row.
    dropStaleHints: db.prepare(
      `DELETE FROM session_fields WHERE session_id IN (SELECT value FROM json_each(?)) AND field GLOB '${HINT_PREFIX}*'
         AND (session_id, field) NOT IN (SELECT value ->> 0, value ->> 1 FROM json_each(?))`,
    ),
    moveItems: db.prepare(
      'INSERT INTO activity (id, kind, at, session_id, item) SELECT id, kind, at, session_id, item FROM activity_journal ORDER BY id',
    ),
    applyRemovals: db.prepare(
      `DELETE FROM sessions WHERE session_id IN (SELECT session_id FROM session_journal WHERE ${NAMED} AND state IS NULL)`,
    ),
    applyFieldRemovals: db.prepare(
      `DELETE FROM session_fields WHERE session_id IN (SELECT session_id FROM session_journal WHERE ${NAMED} AND state IS NULL)`,
    ),
    // `WHERE` before `ON CONFLICT`: SQLite's parser needs it to read an upsert from a SELECT. An
    // update sets only what every event changes: SQLite rewrites a row's entry in each index over a
    // column the SET names, changed or not, and a session's entries in the screen and voice indexes
    // sit among all the sessions held, so an apply grew with the sessions held. The
    // wake time is among the rest: a running session's idle deadline moves only when its check
    // fires, so most events leave it as it was, and its index entry with it.
    applySessions: db.prepare(
      `INSERT INTO sessions (${SUMMARY_COLUMNS}) SELECT ${SUMMARY_COLUMNS} FROM session_journal WHERE ${NAMED} AND state IS NOT NULL
       ON CONFLICT (session_id) DO UPDATE SET state = excluded.state, last_activity_at = excluded.last_activity_at`,
    ),
    // The rest of the summary and the wake time, on the rows where they changed.
    applySummaries: db.prepare(
      `UPDATE sessions SET wake_at = j.wake_at, user_id = j.user_id, screen = j.screen, voice = j.voice, cooldown_until = j.cooldown_until
       FROM session_journal AS j WHERE j.${NAMED} AND j.state IS NOT NULL AND sessions.session_id = j.session_id
         AND (sessions.wake_at IS NOT j.wake_at OR sessions.user_id IS NOT j.user_id OR sessions.screen IS NOT j.screen
           OR sessions.voice IS NOT j.voice OR sessions.cooldown_until IS NOT j.cooldown_until)`,
    ),
    // No WHERE: SQLite empties a table without visiting its rows.
    clearItems: db.prepare('DELETE FROM activity_journal'),
    clearSessions: db.prepare('DELETE FROM session_journal'),
    clearFields: db.prepare('DELETE FROM field_journal'),
  } satisfies Record<string, StatementSync>;
}
