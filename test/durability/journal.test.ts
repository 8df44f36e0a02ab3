import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ActivityDraft } from '../../src/domain/activity.js';
import type { StoredSession } from '../../src/store/ports.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { DATABASE_FILE } from '../../src/store/sqlite-opening.js';
import {
  JOURNAL_APPLY_ITEMS,
  JOURNAL_APPLY_SESSIONS,
  JOURNAL_APPLY_SESSION_ROWS,
  SqliteStore,
} from '../../src/store/sqlite-store.js';
import { START_TIME, tempDataDir } from '../support/harness.js';

const open = (
  dataDir: string,
  retentionItems = 1_000_000,
  retention: { days: number; now: () => number } = { days: 0, now: () => START_TIME },
) => new SqliteStore({ dataDir, sync: 'normal', retentionItems, retentionDays: retention.days, now: retention.now });

const session = (sessionId: string, n: number): StoredSession => ({
  session_id: sessionId,
  value: { voice: 'inactive' },
  context: { n },
  wake_at: null,
  summary: {
    user_id: `u-${sessionId}`,
    screen: 'pan_details',
    voice: 'inactive',
    cooldown_until: null,
    created_at: START_TIME,
    last_activity_at: START_TIME + n,
  },
});

const draft = (sessionId: string, n: number): ActivityDraft => ({
  kind: 'event',
  at: START_TIME + n,
  session_id: sessionId,
  user_id: null,
  payload: { n },
  trace: { trace_id: `t${n}`, request_id: `r${n}` },
});

const count = (db: DatabaseSync, table: string): number =>
  (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

/** Saves and appends n commands' worth (one session save and one item each) over `sessions` sessions, one commit per turn of 50. */
async function write(store: SqliteStore, commands: number, sessions: number, from = 0): Promise<void> {
  for (let n = from; n < from + commands; n += 1) {
    const id = `s${n % sessions}`;
    store.save(id, () => session(id, n));
    store.append(draft(id, n));
    if ((n + 1) % 50 === 0) await store.commit();
  }
  await store.commit();
}

describe('the SQLite store journal: a commit appends, the indexed tables follow in batches', () => {
  it('a commit writes only the journal; a read applies it, each session once, with its newest state', async () => {
    const store = open(tempDataDir());
    await write(store, 30, 3);
    // One commit: a session saved several times in it is journaled once.
    expect(count(store.db, 'session_journal')).toBe(3);
    expect(count(store.db, 'activity_journal')).toBe(30);
    expect(count(store.db, 'sessions')).toBe(0);
    expect(count(store.db, 'activity')).toBe(0);

    // A session whose newest state is only in the journal loads it from there.
    expect(store.load('s2')?.context).toEqual({ n: 29 });
    expect(count(store.db, 'session_journal')).toBe(3);
    expect(store.list({ limit: 100 }).map((item) => item.id)).toEqual(
      Array.from({ length: 30 }, (_, i) => String(i + 1)),
    );
    expect(count(store.db, 'session_journal')).toBe(0);
    expect(count(store.db, 'sessions')).toBe(3);
    expect(store.list({ sessionId: 's1', limit: 100 }).map((item) => item.payload.n)).toEqual([
      1, 4, 7, 10, 13, 16, 19, 22, 25, 28,
    ]);
    expect(
      store.selectSummaries({ limit: 10, sort: 'last_activity', order: 'desc' }).rows.map((row) => row.session_id),
    ).toEqual(['s2', 's1', 's0']);
    store.close();
  });

  const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

  it(`moves the items by themselves once ${JOURNAL_APPLY_ITEMS} are journaled, in a turn after the commit; the sessions' rows wait for their own bound`, async () => {
    const dataDir = tempDataDir();
    const store = open(dataDir);
    // Commits of 50 commands over 10 sessions: 10 session rows and 50 items each.
    await write(store, JOURNAL_APPLY_ITEMS - 50, 10);
    await nextTurn();
    expect(count(store.db, 'activity')).toBe(0);
    await write(store, 50, 10, JOURNAL_APPLY_ITEMS - 50);
    expect(count(store.db, 'activity_journal')).toBe(JOURNAL_APPLY_ITEMS);
    await nextTurn();
    expect(count(store.db, 'activity_journal')).toBe(0);
    expect(count(store.db, 'activity')).toBe(JOURNAL_APPLY_ITEMS);
    // 10 sessions and 400 rows: below both of their bounds, so the rows stay, and a load reads the newest from them.
    const sessionRows = (JOURNAL_APPLY_ITEMS / 50) * 10;
    expect(sessionRows).toBeLessThan(JOURNAL_APPLY_SESSION_ROWS);
    expect(count(store.db, 'session_journal')).toBe(sessionRows);
    expect(count(store.db, 'sessions')).toBe(0);
    const newest = (i: number) => ({ n: JOURNAL_APPLY_ITEMS - 10 + i });
    for (let i = 0; i < 10; i += 1) expect(store.load(`s${i}`)?.context).toEqual(newest(i));
    // A crash now: the next process applies the rows left, and has every item once.
    store.abandon();
    const reopened = open(dataDir);
    expect(count(reopened.db, 'session_journal')).toBe(0);
    expect(reopened.count()).toBe(10);
    for (let i = 0; i < 10; i += 1) expect(reopened.load(`s${i}`)?.context).toEqual(newest(i));
    expect(count(reopened.db, 'activity')).toBe(JOURNAL_APPLY_ITEMS);
    expect(reopened.list({ limit: 3 }).map((item) => item.payload.n)).toEqual([
      JOURNAL_APPLY_ITEMS - 3,
      JOURNAL_APPLY_ITEMS - 2,
      JOURNAL_APPLY_ITEMS - 1,
    ]);
    reopened.close();
  });

  it(`applies the sessions' rows once ${JOURNAL_APPLY_SESSIONS} sessions have some`, async () => {
    const store = open(tempDataDir());
    await write(store, JOURNAL_APPLY_SESSIONS - 50, JOURNAL_APPLY_SESSIONS);
    await nextTurn();
    expect(count(store.db, 'sessions')).toBe(0);
    await write(store, 50, JOURNAL_APPLY_SESSIONS, JOURNAL_APPLY_SESSIONS - 50);
    await nextTurn();
    expect(count(store.db, 'session_journal')).toBe(0);
    expect(count(store.db, 'sessions')).toBe(JOURNAL_APPLY_SESSIONS);
    // The items go with them, below their own bound.
    expect(count(store.db, 'activity_journal')).toBe(0);
    expect(count(store.db, 'activity')).toBe(JOURNAL_APPLY_SESSIONS);
    store.close();
  });

  it(`applies the sessions' rows once ${JOURNAL_APPLY_SESSION_ROWS} are journaled, however few sessions they are of`, async () => {
    const store = open(tempDataDir());
    await write(store, JOURNAL_APPLY_SESSION_ROWS - 50, 100);
    await nextTurn();
    expect(count(store.db, 'session_journal')).toBe(JOURNAL_APPLY_SESSION_ROWS - 50);
    await write(store, 50, 100, JOURNAL_APPLY_SESSION_ROWS - 50);
    await nextTurn();
    expect(count(store.db, 'session_journal')).toBe(0);
    expect(count(store.db, 'sessions')).toBe(100);
    for (let i = 0; i < 100; i += 1)
      expect(store.load(`s${i}`)?.context).toEqual({ n: JOURNAL_APPLY_SESSION_ROWS - 100 + i });
    store.close();
  });

  it('each applied session row carries its newest summary and wake time, whichever columns changed and however the applies fall', async () => {
    type Summary = Pick<StoredSession['summary'], 'user_id' | 'screen' | 'voice' | 'cooldown_until'> &
      Pick<StoredSession, 'wake_at'>;
    const summaryArb: fc.Arbitrary<Summary> = fc.record({
      user_id: fc.constantFrom(null, 'u-1', 'u-2'),
      screen: fc.constantFrom(null, 'pan_details', 'selfie'),
      voice: fc.constantFrom('inactive', 'active'),
      cooldown_until: fc.constantFrom(null, START_TIME + 1_000),
      wake_at: fc.constantFrom(null, START_TIME + 5_000, START_TIME + 9_000),
    });
    const step = fc.oneof(
      fc.record({ session: fc.integer({ min: 0, max: 3 }), summary: summaryArb }),
      fc.constant('apply' as const),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), async (steps) => {
        const store = open(tempDataDir());
        const newest = new Map<string, Summary & { last_activity_at: number }>();
        const rows = () =>
          new Map(
            (
              store.db
                .prepare(
                  'SELECT session_id, user_id, screen, voice, cooldown_until, wake_at, last_activity_at FROM sessions',
                )
                .all() as (Summary & { session_id: string; last_activity_at: number })[]
            ).map(({ session_id, ...row }) => [session_id, row]),
          );
        try {
          for (const [n, next] of steps.entries()) {
            if (next === 'apply') {
              store.count();
              expect(rows()).toEqual(newest);
              continue;
            }
            const id = `s${next.session}`;
            const saved = session(id, n);
            const { wake_at, ...summary } = next.summary;
            store.save(id, () => ({ ...saved, wake_at, summary: { ...saved.summary, ...summary } }));
            newest.set(id, { ...next.summary, last_activity_at: saved.summary.last_activity_at });
            await store.commit();
          }
          store.count();
          expect(rows()).toEqual(newest);
        } finally {
          store.close();
        }
      }),
      { numRuns: 60 },
    );
  });

  it('a session whose wake time alone changed has it in the table after the next apply, and the wake timer reads it', async () => {
    const store = open(tempDataDir());
    const saved = session('s0', 1);
    for (const wake_at of [START_TIME + 5_000, START_TIME + 9_000]) {
      store.save('s0', () => ({ ...saved, wake_at }));
      await store.commit();
      expect(store.nextWakeAfter(START_TIME)).toBe(wake_at);
    }
    expect(store.dueBy(START_TIME + 5_000, 10)).toEqual([]);
    expect(store.dueBy(START_TIME + 9_000, 10)).toEqual(['s0']);
    store.close();
  });

  it('a removal is journaled too: the session is gone for a load before and after the apply', async () => {
    const store = open(tempDataDir());
    await write(store, 4, 2);
    store.remove('s0');
    await store.commit();
    expect(store.load('s0')).toBeUndefined();
    expect(store.count()).toBe(1);
    store.save('s0', () => session('s0', 9));
    await store.commit();
    expect(store.load('s0')?.context).toEqual({ n: 9 });
    store.close();
  });

  it('holds says what load would find, wherever the session is: queued, journaled, in the tables, removed', async () => {
    const store = open(tempDataDir());
    const held = (...ids: string[]) => ids.map((id) => [store.holds(id), store.load(id) !== undefined]);
    store.save('queued', () => session('queued', 1));
    expect(held('queued', 'never')).toEqual([
      [true, true],
      [false, false],
    ]);
    await store.commit();
    // In the journal only, then in the tables only once a read applied it.
    expect(count(store.db, 'session_journal')).toBe(1);
    expect(held('queued')).toEqual([[true, true]]);
    store.count();
    expect([count(store.db, 'session_journal'), count(store.db, 'sessions')]).toEqual([0, 1]);
    expect(held('queued')).toEqual([[true, true]]);
    // Removed: queued, then journaled, then applied.
    store.remove('queued');
    expect(held('queued')).toEqual([[false, false]]);
    await store.commit();
    expect(count(store.db, 'session_journal')).toBe(1);
    expect(held('queued')).toEqual([[false, false]]);
    store.count();
    expect(held('queued')).toEqual([[false, false]]);
    store.close();
  });

  it('a removal after an apply, and one a crash left in the journal, leave the tables at the next apply', async () => {
    const dataDir = tempDataDir();
    const store = open(dataDir);
    await write(store, 6, 3);
    expect(store.count()).toBe(3);
    store.remove('s0');
    await store.commit();
    expect(store.count()).toBe(2);
    store.remove('s1');
    await store.commit();
    store.abandon();

    const again = open(dataDir);
    expect(count(again.db, 'session_journal')).toBe(0);
    expect(again.count()).toBe(1);
    expect(again.load('s1')).toBeUndefined();
    expect(again.load('s2')?.context).toEqual({ n: 5 });
    again.close();
  });

  it('what a crash left in the journal is applied when the file is opened again, ids continuing', async () => {
    const dataDir = tempDataDir();
    const store = open(dataDir);
    await write(store, 120, 7);
    expect(count(store.db, 'activity')).toBe(0);
    store.abandon();

    const again = open(dataDir);
    expect(count(again.db, 'activity_journal')).toBe(0);
    expect(again.bounds()).toEqual({ oldestId: 1, lastId: 120 });
    expect(again.load('s6')?.context).toEqual({ n: 118 });
    expect(again.append(draft('s6', 500)).id).toBe('121');
    again.close();
  });

  it('retention by count is applied with the journal: what is kept stays contiguous and newest', async () => {
    const store = open(tempDataDir(), 25);
    await write(store, 60, 4);
    expect(store.bounds()).toEqual({ oldestId: 36, lastId: 60 });
    expect(store.after(0).items.map((item) => Number(item.id))).toEqual(Array.from({ length: 25 }, (_, i) => 36 + i));
    expect(store.after(0).gap).toBe(true);
    store.close();
  });

  it('when an apply fails (a full disk) nothing is lost: a load reads the journal, health says why, and the next apply catches up', async () => {
    const store = open(tempDataDir());
    await write(store, 10, 2);
    expect(store.count()).toBe(2);
    // Enough rows that the tables need new pages for them, whatever the page size.
    await write(store, 400, 2, 10);
    const pages = (store.db.prepare('PRAGMA page_count').get() as { page_count: number }).page_count;
    // Room for the journal's rows only, not for the same bytes again in the tables.
    store.db.exec(`PRAGMA max_page_count = ${pages}`);
    expect(store.list({ limit: 1000 })).toHaveLength(10);
    expect(store.health()).toMatchObject({
      status: 'failing',
      last_error: expect.stringMatching(/applying the journal failed: .*full/),
    });
    // Kept: both sessions in each of the nine commits.
    expect(count(store.db, 'session_journal')).toBe(18);
    expect(store.load('s1')?.context).toEqual({ n: 409 });

    store.db.exec('PRAGMA max_page_count = 1073741823');
    expect(store.list({ limit: 1000 })).toHaveLength(410);
    expect(count(store.db, 'session_journal')).toBe(0);
    expect(store.load('s1')?.context).toEqual({ n: 409 });
    await write(store, 1, 1, 410);
    expect(store.health().status).toBe('ok');
    store.close();
  });

  it('with ACTIVITY_RETENTION_DAYS, writes a minute apart apply the journal, so expired items leave the file without a read', async () => {
    let now = START_TIME;
    const store = open(tempDataDir(), 1_000_000, { days: 1, now: () => now });
    await write(store, 10, 2);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(count(store.db, 'activity')).toBe(10);
    now += 2 * 86_400_000;
    store.append({ ...draft('s0', 10), at: now });
    await store.commit();
    await new Promise<void>((resolve) => setImmediate(resolve));
    // Read from the file directly: a store read would apply the journal itself.
    expect(count(store.db, 'activity_journal')).toBe(0);
    expect((store.db.prepare('SELECT id FROM activity').all() as { id: number }[]).map((row) => row.id)).toEqual([11]);
    store.close();
  });

  it('a new file gets 16 KiB pages; a file made with 4 KiB pages keeps them and works as before', async () => {
    const pageSize = (store: SqliteStore) =>
      (store.db.prepare('PRAGMA page_size').get() as { page_size: number }).page_size;
    const fresh = open(tempDataDir());
    expect(pageSize(fresh)).toBe(16_384);
    fresh.close();

    const dataDir = tempDataDir();
    const made = new DatabaseSync(join(dataDir, DATABASE_FILE));
    made.exec('PRAGMA page_size = 4096; CREATE TABLE placeholder (x); DROP TABLE placeholder');
    made.close();
    const store = open(dataDir);
    expect(pageSize(store)).toBe(4096);
    await write(store, 30, 3);
    store.close();
    const again = open(dataDir);
    expect(pageSize(again)).toBe(4096);
    expect(again.load('s2')?.context).toEqual({ n: 29 });
    expect(again.list({ limit: 100 })).toHaveLength(30);
    again.close();
  });

  it('a file from before the journal (schema 1) opens with its sessions and activity', () => {
    const dataDir = tempDataDir();
    const db = new DatabaseSync(join(dataDir, DATABASE_FILE));
    db.exec(MIGRATIONS[0]!);
    db.exec('PRAGMA user_version = 1');
    db.prepare(
      "INSERT INTO sessions (session_id, state, voice, created_at, last_activity_at) VALUES ('old', ?, 'inactive', 1, 2)",
    ).run(JSON.stringify({ value: {}, context: { kept: true } }));
    db.prepare("INSERT INTO activity (kind, at, session_id, item) VALUES ('sdk_event', 1, 'old', ?)").run(
      JSON.stringify({ id: '1', kind: 'sdk_event' }),
    );
    db.close();

    const again = open(dataDir);
    expect((again.db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version).toBe(
      MIGRATIONS.length,
    );
    expect(again.load('old')?.context).toEqual({ kept: true });
    expect(again.bounds()).toEqual({ oldestId: 1, lastId: 1 });
    again.close();
  });
});

describe('a journal that cannot be applied at start', () => {
  it('because the file is damaged: says so, and how to recover, not to free disk space', async () => {
    const dataDir = tempDataDir();
    const store = open(dataDir);
    await write(store, 100, 10);
    store.close();
    const file = join(dataDir, DATABASE_FILE);
    // Journaled but not applied, as a crash leaves it; then the activity index's root page is overwritten.
    const db = new DatabaseSync(file);
    db.exec('DELETE FROM activity; DELETE FROM sessions');
    db.exec(
      `INSERT INTO activity_journal (id, kind, at, session_id, item) VALUES (1000, 'event', ${START_TIME}, 's1', '{}')`,
    );
    const { rootpage } = db
      .prepare("SELECT rootpage FROM sqlite_master WHERE name = 'activity_span_session'")
      .get() as { rootpage: number };
    const { page_size: pageSize } = db.prepare('PRAGMA page_size').get() as { page_size: number };
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    db.close();
    const bytes = readFileSync(file);
    bytes.fill(0xa5, (rootpage - 1) * pageSize, rootpage * pageSize);
    writeFileSync(file, bytes);
    expect(() => open(dataDir)).toThrow(
      /cannot apply the journal .*malformed.*the file is damaged: restore a backup, or recover/,
    );
  });
});
