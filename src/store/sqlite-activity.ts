/**
 * Reading the activity log from the SQLite store: the newest items (of a kind, of a session, span
 * by span of the index), and the items after an id for a stream catching up. Rows whose item
 * cannot be read back are left out (item-reader.ts). The group commit (sqlite-store.ts) settles
 * what is queued before each read.
 */
import type { ActivityItem, ActivityKind } from '../domain/activity.js';
import type { ItemReader } from './item-reader.js';
import type { ActivityQuery } from './ports.js';
import type { ItemRow, SqliteStatements } from './sqlite-statements.js';
import { spanOf } from './sqlite-statements.js';

export class SqliteActivity {
  constructor(
    private readonly statements: SqliteStatements,
    private readonly itemReader: ItemReader,
    /** The oldest id kept and the newest committed, as the store knows them now. */
    private readonly bounds: () => { oldestId: number | undefined; committedId: number },
  ) {}

  list(query: ActivityQuery): ActivityItem[] {
    const { sessionId, kind, limit } = query;
    if (sessionId !== undefined) return this.listSession(sessionId, kind, limit).reverse();
    const statement = kind !== undefined ? this.statements.newestByKind : this.statements.newest;
    const params = kind !== undefined ? [kind] : [];
    return this.itemReader.readAll(statement.iterate(...params, limit) as Iterable<ItemRow>).reverse();
  }

  /** A session's newest items, newest first: span by span from the newest, as the index keys them (migrations.ts, step 4). */
  private listSession(sessionId: string, kind: ActivityKind | undefined, limit: number): ActivityItem[] {
    const found: ActivityItem[] = [];
    const { oldestId, committedId } = this.bounds();
    if (oldestId === undefined) return found;
    const statement = kind !== undefined ? this.statements.newestBySessionKind : this.statements.newestBySession;
    const oldestSpan = spanOf(oldestId);
    for (let span = spanOf(committedId); span >= oldestSpan && found.length < limit; span -= 1) {
      const params = kind !== undefined ? [span, sessionId, kind] : [span, sessionId];
      this.itemReader.readAll(statement.iterate(...params, limit - found.length) as Iterable<ItemRow>, found);
    }
    return found;
  }

  after(afterId: number, limit = Number.MAX_SAFE_INTEGER): { items: ActivityItem[]; gap: boolean } {
    const items = this.itemReader.readAll(this.statements.after.iterate(afterId, limit) as Iterable<ItemRow>);
    const { oldestId } = this.bounds();
    return { items, gap: oldestId !== undefined && afterId + 1 < oldestId };
  }
}
