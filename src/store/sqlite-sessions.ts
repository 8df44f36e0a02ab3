/**
 * Reading sessions from the SQLite store: one session (its newest row, from the journal or the
 * tables, joined with its fields), the due and least recent ones, and a page of summaries in SQL.
 * The group commit (sqlite-store.ts) settles what is queued before any of these but `load`.
 */
import type { DatabaseSync } from 'node:sqlite';
import { joinContext } from './session-fields.js';
import type { SqliteJournal, StoredSessionRow } from './sqlite-journal.js';
import type { SqliteStatements } from './sqlite-statements.js';
import type { SummaryQuery, SummaryRow, SummarySelection, StoredSession } from './ports.js';
import { UnreadableSessionError } from './ports.js';

export class SqliteSessions {
  constructor(
    private readonly db: DatabaseSync,
    private readonly statements: SqliteStatements,
    private readonly journal: SqliteJournal,
  ) {}

  /** The session as committed: the journal's newest row, else the table's; undefined if neither holds it. */
  loadCommitted(sessionId: string): StoredSession | undefined {
    const row =
      this.journal.newestRow(sessionId) ?? (this.statements.loadSession.get(sessionId) as StoredSessionRow | undefined);
    if (!row?.state) return undefined;
    // The fields the journal holds are the newest; the rest are in `session_fields`.
    const fields = this.journal.journaledFields(sessionId);
    for (const { field, value } of this.statements.loadFields.iterate(sessionId) as Iterable<{
      field: string;
      value: string;
    }>)
      if (!fields.has(field)) fields.set(field, value);
    try {
      return fromRow(
        row,
        joinContext(row.state, (key) => fields.get(key)),
      );
    } catch (error) {
      // Its name only: a JSON.parse message quotes the text.
      throw new UnreadableSessionError(
        error instanceof SyntaxError
          ? 'stored state is not JSON'
          : `stored state unreadable (${error instanceof Error ? error.name : typeof error})`,
      );
    }
  }

  /** Whether the session is committed (the journal's newest row, else the table's), its state not read. */
  holdsCommitted(sessionId: string): boolean {
    return this.journal.holds(sessionId) ?? this.statements.holdsSession.get(sessionId) !== undefined;
  }

  count(): number {
    return (this.statements.countSessions.get() as { n: number }).n;
  }

  dueBy(at: number, limit: number, skip: (sessionId: string) => boolean): string[] {
    const due: string[] = [];
    for (const row of this.statements.dueSessions.iterate(at) as Iterable<{ session_id: string }>) {
      if (due.length >= limit) break;
      if (!skip(row.session_id)) due.push(row.session_id);
    }
    return due;
  }

  nextWakeAfter(at: number): number | undefined {
    const row = this.statements.nextWake.get(Number.isFinite(at) ? at : -Number.MAX_SAFE_INTEGER) as {
      at: number | null;
    };
    return row.at ?? undefined;
  }

  /** Walked row by row over the recency index: a caller that stops early has read only what it looked at. */
  *leastRecent(): Generator<string> {
    for (const row of this.statements.leastRecent.iterate() as Iterable<{ session_id: string }>) yield row.session_id;
  }

  /** The filters and order of `selectSummaries` (summary-selection.ts) in SQL, over the indexed summary columns. */
  selectSummaries(query: SummaryQuery): SummarySelection {
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (query.voice === 'active') where.push("voice IN ('starting', 'active', 'stopping')");
    if (query.voice === 'inactive') where.push("voice = 'inactive'");
    if (query.screen !== undefined) {
      where.push('lower(screen) = ?');
      params.push(query.screen);
    }
    if (query.q !== undefined) {
      where.push(
        "(instr(lower(session_id), ?) > 0 OR instr(lower(coalesce(user_id, '')), ?) > 0 OR instr(lower(coalesce(screen, '')), ?) > 0)",
      );
      params.push(query.q, query.q, query.q);
    }
    const filter = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const { total } = this.db.prepare(`SELECT COUNT(*) AS total FROM sessions ${filter}`).get(...params) as {
      total: number;
    };
    const column = query.sort === 'last_activity' ? 'last_activity_at' : 'session_id';
    const direction = query.order === 'asc' ? 'ASC' : 'DESC';
    const pageWhere = [...where];
    const pageParams = [...params];
    if (query.after !== undefined) {
      const beyond = query.order === 'asc' ? '>' : '<';
      if (column === 'session_id') {
        pageWhere.push(`session_id ${beyond} ?`);
        pageParams.push(query.after.id);
      } else {
        pageWhere.push(`(${column} ${beyond} ? OR (${column} = ? AND session_id ${beyond} ?))`);
        pageParams.push(query.after.primary, query.after.primary, query.after.id);
      }
    }
    const order =
      column === 'session_id' ? `session_id ${direction}` : `${column} ${direction}, session_id ${direction}`;
    const pageFilter = pageWhere.length ? `WHERE ${pageWhere.join(' AND ')}` : '';
    const sql =
      'SELECT session_id, user_id, screen, voice, cooldown_until, created_at, last_activity_at ' +
      `FROM sessions ${pageFilter} ORDER BY ${order} LIMIT ?`;
    const rows = this.db.prepare(sql).all(...pageParams, query.limit + 1) as unknown as SummaryRow[];
    return { rows: rows.slice(0, query.limit), total, more: rows.length > query.limit };
  }
}

function fromRow(
  row: StoredSessionRow,
  { value, context }: { value: unknown; context: Record<string, unknown> },
): StoredSession {
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
