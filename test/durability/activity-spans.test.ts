import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ActivityItem, ActivityKind } from '../../src/domain/activity.js';
import { ACTIVITY_SPAN_BITS, MIGRATIONS } from '../../src/store/migrations.js';
import { DATABASE_FILE } from '../../src/store/sqlite-opening.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { START_TIME, tempDataDir } from '../support/harness.js';

const SPAN = 2 ** ACTIVITY_SPAN_BITS;

const open = (dataDir: string) =>
  new SqliteStore({ dataDir, sync: 'normal', retentionItems: 1_000_000, retentionDays: 0, now: () => START_TIME });

/** A store whose next activity id is `next`, as a file that has given out the ids before it would be. */
function storeFrom(next: number, dataDir = tempDataDir()): SqliteStore {
  open(dataDir).close();
  const db = new DatabaseSync(join(dataDir, DATABASE_FILE));
  db.prepare("DELETE FROM sqlite_sequence WHERE name = 'activity'").run();
  db.prepare("INSERT INTO sqlite_sequence (name, seq) VALUES ('activity', ?)").run(next - 1);
  db.close();
  return open(dataDir);
}

const append = (store: SqliteStore, sessionId: string, kind: ActivityKind, n: number): ActivityItem =>
  store.append({
    kind,
    at: START_TIME + n,
    session_id: sessionId,
    user_id: null,
    payload: { n },
    trace: { trace_id: `t${n}`, request_id: `r${n}` },
  });

/** What a session's listing must be: its newest `limit` items (of the kind), oldest first, from everything appended. */
const expected = (all: ActivityItem[], sessionId: string, limit: number, kind?: ActivityKind) =>
  all.filter((item) => item.session_id === sessionId && (kind === undefined || item.kind === kind)).slice(-limit);

const ids = (items: ActivityItem[]) => items.map((item) => item.id);

describe("a session's activity read span by span of the index (schema 4)", () => {
  it('lists the same items as a filter of the whole log, across span boundaries and spans the session has nothing in', async () => {
    const kinds: ActivityKind[] = ['event', 'trigger'];
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 * SPAN }),
        fc.array(
          fc.record({
            session: fc.constantFrom('s0', 's1', 's2'),
            kind: fc.constantFrom(...kinds),
            jump: fc.boolean(),
          }),
          { minLength: 1, maxLength: 40 },
        ),
        fc.constantFrom(1, 2, 5, 100),
        async (first, appends, limit) => {
          const dataDir = tempDataDir();
          let store = storeFrom(first, dataDir);
          const all: ActivityItem[] = [];
          for (const [n, { session, kind, jump }] of appends.entries()) {
            if (jump) {
              // The next ids a span or more on: the spans between hold nothing.
              await store.commit();
              store.close();
              store = storeFrom(Number(all.at(-1)?.id ?? first) + SPAN + 1, dataDir);
            }
            all.push(append(store, session, kind, n));
          }
          await store.commit();
          for (const session of ['s0', 's1', 's2', 'absent']) {
            expect(ids(store.list({ sessionId: session, limit }))).toEqual(ids(expected(all, session, limit)));
            for (const kind of kinds)
              expect(ids(store.list({ sessionId: session, kind, limit }))).toEqual(
                ids(expected(all, session, limit, kind)),
              );
          }
          store.close();
        },
      ),
      { numRuns: 25 },
    );
  });

  it('reads a session through the span index, whose entries for new items sit together', async () => {
    const store = storeFrom(SPAN - 2);
    for (let n = 0; n < 4; n += 1) append(store, `s${n % 2}`, 'event', n);
    await store.commit();
    expect(ids(store.list({ sessionId: 's1', limit: 10 }))).toEqual([String(SPAN - 1), String(SPAN + 1)]);
    const plan = (sql: string) =>
      (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(1, 's1', 'event', 10) as { detail: string }[])
        .map((row) => row.detail)
        .join(' ');
    expect(
      plan(
        `SELECT item FROM activity WHERE (id >> ${ACTIVITY_SPAN_BITS}) = ? AND session_id = ? AND kind = ? ORDER BY id DESC LIMIT ?`,
      ),
    ).toMatch(/USING INDEX activity_span_session/);
    const indexes = (
      store.db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'activity'").all() as {
        name: string;
      }[]
    ).map((row) => row.name);
    expect(indexes.sort()).toEqual(['activity_kind', 'activity_span_session']);
    store.close();
  });

  it('a file from before (schema 3) gets the span index in place of the session index, its items listed as before', () => {
    const dataDir = tempDataDir();
    const db = new DatabaseSync(join(dataDir, DATABASE_FILE));
    for (const step of MIGRATIONS.slice(0, 3)) db.exec(step);
    db.exec('PRAGMA user_version = 3');
    const insert = db.prepare('INSERT INTO activity (kind, at, session_id, item) VALUES (?, ?, ?, ?)');
    for (let n = 1; n <= 6; n += 1)
      insert.run(
        'event',
        n,
        `s${n % 2}`,
        JSON.stringify({
          id: String(n),
          kind: 'event',
          timestamp: new Date(n).toISOString(),
          session_id: `s${n % 2}`,
          user_id: null,
          payload: {},
          trace: { trace_id: 't', request_id: 'r' },
        }),
      );
    db.close();

    const store = open(dataDir);
    expect(ids(store.list({ sessionId: 's0', limit: 2 }))).toEqual(['4', '6']);
    expect(ids(store.list({ sessionId: 's1', limit: 10 }))).toEqual(['1', '3', '5']);
    expect(store.db.prepare("SELECT name FROM sqlite_master WHERE name = 'activity_session'").get()).toBeUndefined();
    store.close();
  });
});
