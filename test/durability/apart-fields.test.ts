import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/store/migrations.js';
import type { StoredSession } from '../../src/store/ports.js';
import { DATABASE_FILE } from '../../src/store/sqlite-opening.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { panInput, panSchema } from '../fixtures/client-events.js';
import type { Harness } from '../support/harness.js';
import { START_TIME, advance, createHarness, restartAfterCrash, tempDataDir } from '../support/harness.js';

const open = (dataDir: string) =>
  new SqliteStore({ dataDir, sync: 'normal', retentionItems: 1_000_000, retentionDays: 0, now: () => START_TIME });

type Context = { n: number; schemas: Record<string, unknown>; component_hints: unknown[] };

const stored = (sessionId: string, context: Context): StoredSession => ({
  session_id: sessionId,
  value: { voice: 'inactive' },
  context,
  wake_at: null,
  summary: {
    user_id: null,
    screen: null,
    voice: 'inactive',
    cooldown_until: null,
    created_at: START_TIME,
    last_activity_at: START_TIME + context.n,
  },
});

/** The journal's saves of a session, oldest first: whether each wrote the schemas, and which hints. */
const journalRows = (store: SqliteStore, sessionId: string) =>
  (
    store.db
      .prepare(
        `SELECT (SELECT count(*) FROM field_journal f WHERE f.seq = j.seq AND f.field = 'schemas') AS schemas,
          (SELECT group_concat(substr(field, 6), ',') FROM field_journal f WHERE f.seq = j.seq AND f.field GLOB 'hint:*') AS hints
        FROM session_journal j WHERE session_id = ? ORDER BY seq`,
      )
      .all(sessionId) as { schemas: number; hints: string | null }[]
  ).map((row) => ({ schemas: row.schemas, hints: row.hints?.split(',').sort() ?? [] }));

async function save(store: SqliteStore, sessionId: string, context: Context): Promise<void> {
  store.save(sessionId, () => stored(sessionId, context));
  await store.commit();
}

const schemasA = { pan_details: { screen_id: 'pan_details', schema: panSchema } };
const hint = (id: string) => ({ component_id: id, hint: '******234F', bytes: 40 });

describe("a session's schemas and hints are written when they change, not with every event", () => {
  it('a save writes only the schemas and hints that are new objects; loads before and after the apply, and after a reopen, see them all', async () => {
    const dataDir = tempDataDir();
    const store = open(dataDir);
    const pan = hint('pan');
    const hints1 = [pan];
    const hints2 = [pan, hint('dob')];
    // The same component typed again: a new object for it, moved to the end, as the session does.
    const hints3 = [hints2[1]!, hint('pan')];
    await save(store, 's1', { n: 1, schemas: schemasA, component_hints: hints1 });
    await save(store, 's1', { n: 2, schemas: schemasA, component_hints: hints2 });
    await save(store, 's1', { n: 3, schemas: schemasA, component_hints: hints2 });
    await save(store, 's1', { n: 4, schemas: schemasA, component_hints: hints3 });
    expect(journalRows(store, 's1')).toEqual([
      { schemas: 1, hints: ['pan'] },
      { schemas: 0, hints: ['dob'] },
      { schemas: 0, hints: [] },
      { schemas: 0, hints: ['pan'] },
    ]);
    const expected = { n: 4, schemas: schemasA, component_hints: hints3 };
    expect(store.load('s1')?.context).toEqual(expected);

    // The apply: each field once, with its newest value; the state without them.
    expect(store.count()).toBe(1);
    const fields = Object.fromEntries(
      (
        store.db.prepare("SELECT field, value FROM session_fields WHERE session_id = 's1'").all() as {
          field: string;
          value: string;
        }[]
      ).map((row) => [row.field, JSON.parse(row.value)]),
    );
    expect(fields).toEqual({ schemas: schemasA, 'hint:pan': hints3[1], 'hint:dob': hints3[0] });
    expect(
      JSON.parse((store.db.prepare('SELECT state FROM sessions').get() as { state: string }).state).context,
    ).toEqual({ n: 4 });
    expect(store.load('s1')?.context).toEqual(expected);

    // In the journal again, leaving every field to the tables.
    await save(store, 's1', { n: 5, schemas: schemasA, component_hints: hints3 });
    expect(journalRows(store, 's1')).toEqual([{ schemas: 0, hints: [] }]);
    expect(store.load('s1')?.context).toEqual({ ...expected, n: 5 });
    // A hint dropped (past the bound, or to the budget) leaves the file with the next apply.
    await save(store, 's1', { n: 6, schemas: schemasA, component_hints: [hints3[1]!] });
    expect(store.load('s1')?.context).toEqual({ ...expected, n: 6, component_hints: [hints3[1]] });
    expect(store.count()).toBe(1);
    expect(store.db.prepare("SELECT field FROM session_fields WHERE session_id = 's1' ORDER BY field").all()).toEqual([
      { field: 'hint:pan' },
      { field: 'schemas' },
    ]);
    store.close();

    // A new process holds none of the objects: its first save writes them again.
    const again = open(dataDir);
    const loaded = again.load('s1')!.context as Context;
    expect(loaded).toEqual({ ...expected, n: 6, component_hints: [hints3[1]] });
    await save(again, 's1', { ...loaded, n: 7 });
    expect(journalRows(again, 's1')).toEqual([{ schemas: 1, hints: ['pan'] }]);
    expect(again.load('s1')?.context).toEqual({ ...expected, n: 7, component_hints: [hints3[1]] });
    again.close();
  });

  it('a crash with rows that left them as before: the reopened file applies the journal and loads them', async () => {
    const dataDir = tempDataDir();
    const store = open(dataDir);
    const hints = [hint('pan')];
    await save(store, 's1', { n: 1, schemas: schemasA, component_hints: hints });
    await save(store, 's2', { n: 1, schemas: {}, component_hints: [] });
    await save(store, 's1', { n: 2, schemas: schemasA, component_hints: hints });
    store.abandon();
    const again = open(dataDir);
    expect(again.load('s1')?.context).toEqual({ n: 2, schemas: schemasA, component_hints: hints });
    expect(again.load('s2')?.context).toEqual({ n: 1, schemas: {}, component_hints: [] });
    again.close();
  });

  it('objects are known per session: the same one saved for another session is written for it', async () => {
    const store = open(tempDataDir());
    const hints = [hint('pan')];
    await save(store, 's1', { n: 1, schemas: schemasA, component_hints: hints });
    await save(store, 's2', { n: 1, schemas: schemasA, component_hints: hints });
    expect(journalRows(store, 's2')).toEqual([{ schemas: 1, hints: ['pan'] }]);
    expect(store.load('s2')?.context).toEqual({ n: 1, schemas: schemasA, component_hints: hints });
    store.close();
  });

  it('what was written for a session is remembered while it is in memory, and forgotten once it left and its last save is written', async () => {
    const store = open(tempDataDir());
    const context = { n: 1, schemas: schemasA, component_hints: [hint('pan')] };
    await save(store, 's1', context);
    await save(store, 's2', context);
    await save(store, 's1', { ...context, n: 2 });
    expect(journalRows(store, 's1')).toEqual([
      { schemas: 1, hints: ['pan'] },
      { schemas: 0, hints: [] },
    ]);
    // s1 hibernates: its last save is queued when it leaves memory, and writes only its state.
    store.save('s1', () => stored('s1', { ...context, n: 3 }));
    store.released('s1');
    expect(store.rememberedSessions).toBe(2);
    await store.commit();
    expect(journalRows(store, 's1').at(-1)).toEqual({ schemas: 0, hints: [] });
    expect(store.rememberedSessions).toBe(1);
    // s2 leaves with nothing queued: forgotten at once. Saved again (woken), its objects are written again.
    store.released('s2');
    expect(store.rememberedSessions).toBe(0);
    await save(store, 's2', { ...context, n: 2 });
    expect(journalRows(store, 's2').at(-1)).toEqual({ schemas: 1, hints: ['pan'] });
    expect(store.load('s1')?.context).toEqual({ ...context, n: 3 });
    store.close();
  });

  it('sessions that hibernate leave nothing remembered behind them', async () => {
    const h = createHarness({ env: { STORE: 'sqlite', SESSION_HIBERNATE_SECONDS: '60' } });
    const store = h.store.sessions as SqliteStore;
    for (let n = 0; n < 20; n += 1)
      await h.http
        .post('/v1/events')
        .send(panInput(`hib-${n}`))
        .expect(200);
    expect(store.rememberedSessions).toBe(20);
    advance(h.clock, 61_000);
    await store.commit();
    expect(h.system.sessionHost.counts).toEqual({ running: 0, hibernated: 20 });
    expect(store.rememberedSessions).toBe(0);
  });

  it('empty ones, which new sessions share, stay in the state: a session removed and begun again starts empty', async () => {
    const store = open(tempDataDir());
    const empty = { schemas: {}, component_hints: [] };
    await save(store, 's1', { n: 1, ...empty });
    await save(store, 's1', { n: 2, schemas: schemasA, component_hints: [hint('pan')] });
    store.remove('s1');
    await store.commit();
    expect(store.load('s1')).toBeUndefined();
    await save(store, 's1', { n: 1, ...empty });
    expect(journalRows(store, 's1').at(-1)).toEqual({ schemas: 0, hints: [] });
    expect(store.load('s1')?.context).toEqual({ n: 1, ...empty });
    expect(store.count()).toBe(1);
    expect(store.load('s1')?.context).toEqual({ n: 1, ...empty });
    // Schemas given up entirely (to the budget) are empty, not the ones the tables still hold.
    await save(store, 's1', { n: 2, schemas: schemasA, component_hints: [] });
    expect(store.count()).toBe(1);
    await save(store, 's1', { n: 3, ...empty });
    expect(store.load('s1')?.context).toEqual({ n: 3, ...empty });
    expect(store.count()).toBe(1);
    expect(store.load('s1')?.context).toEqual({ n: 3, ...empty });
    store.close();
  });

  it('a session removed in the batch that wrote its fields leaves none behind in the tables', async () => {
    const dataDir = tempDataDir();
    const store = open(dataDir);
    await save(store, 's1', { n: 1, schemas: schemasA, component_hints: [hint('pan')] });
    await save(store, 's2', { n: 1, schemas: schemasA, component_hints: [hint('pan')] });
    store.remove('s1');
    await store.commit();
    expect(store.count()).toBe(1);
    expect(store.db.prepare('SELECT DISTINCT session_id FROM session_fields').all()).toEqual([{ session_id: 's2' }]);
    store.close();
    // The same from a journal a crash left.
    const crashed = open(tempDataDir());
    await save(crashed, 's1', { n: 1, schemas: schemasA, component_hints: [hint('pan')] });
    crashed.remove('s1');
    await crashed.commit();
    const file = crashed.file;
    crashed.abandon();
    const reopened = new SqliteStore({
      dataDir: join(file, '..'),
      sync: 'normal',
      retentionItems: 1_000_000,
      retentionDays: 0,
      now: () => START_TIME,
    });
    expect(reopened.count()).toBe(0);
    expect(reopened.db.prepare('SELECT count(*) AS n FROM session_fields').get()).toEqual({ n: 0 });
    reopened.close();
  });

  it("after every apply a session's hint rows are its newest hints, however hints are added, typed again, dropped, and the store reopened", async () => {
    type Hint = ReturnType<typeof hint>;
    const op = fc.oneof(
      {
        arbitrary: fc.record({
          kind: fc.constant('save' as const),
          session: fc.integer({ min: 0, max: 1 }),
          change: fc.constantFrom('add', 'type', 'drop', 'drop-newest', 'same'),
          pick: fc.nat(),
        }),
        weight: 5,
      },
      { arbitrary: fc.constant({ kind: 'apply' as const }), weight: 2 },
      {
        arbitrary: fc.record({ kind: fc.constant('remove' as const), session: fc.integer({ min: 0, max: 1 }) }),
        weight: 1,
      },
      { arbitrary: fc.constant({ kind: 'reopen' as const }), weight: 1 },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 30 }), async (ops) => {
        const dataDir = tempDataDir();
        let store = open(dataDir);
        // Each session's newest hints, the objects it holds (a hint kept is the same object, as in the session).
        const hints = new Map<string, Hint[]>();
        let next = 0;
        const hintRows = () => {
          const rows = new Map<string, string[]>();
          for (const row of store.db
            .prepare(
              "SELECT session_id, substr(field, 6) AS id FROM session_fields WHERE field GLOB 'hint:*' ORDER BY session_id, field",
            )
            .all() as { session_id: string; id: string }[])
            rows.set(row.session_id, [...(rows.get(row.session_id) ?? []), row.id]);
          return rows;
        };
        const expected = () =>
          new Map(
            [...hints]
              .filter(([, list]) => list.length > 0)
              .map(([id, list]) => [id, list.map((h) => h.component_id).sort()]),
          );
        try {
          for (const [n, step] of ops.entries()) {
            if (step.kind === 'apply') {
              store.count();
              expect(hintRows()).toEqual(expected());
            } else if (step.kind === 'reopen') {
              store.close();
              store = open(dataDir);
              expect(hintRows()).toEqual(expected());
            } else if (step.kind === 'remove') {
              const id = `s${step.session}`;
              if (!hints.has(id)) continue;
              hints.delete(id);
              store.remove(id);
              await store.commit();
            } else {
              const id = `s${step.session}`;
              const list = [...(hints.get(id) ?? [])];
              if (step.change === 'add' || list.length === 0) list.push(hint(`c${(next += 1)}`));
              else if (step.change === 'type') {
                // A component typed again: a new object for it, moved to the end.
                const [typed] = list.splice(step.pick % list.length, 1);
                list.push(hint(typed!.component_id));
              } else if (step.change === 'drop') list.splice(step.pick % list.length, 1);
              // Added and dropped again before an apply: its row was journaled all the same.
              else if (step.change === 'drop-newest') list.pop();
              hints.set(id, list);
              await save(store, id, { n, schemas: {}, component_hints: list });
            }
          }
          store.count();
          expect(hintRows()).toEqual(expected());
          for (const [id, list] of hints)
            expect((store.load(id)?.context as Context | undefined)?.component_hints).toEqual(list);
        } finally {
          store.close();
        }
      }),
      {
        numRuns: 150,
        // A hint typed and dropped again between two applies, which random runs find only sometimes.
        examples: [
          [
            [
              { kind: 'save', session: 0, change: 'add', pick: 0 },
              { kind: 'apply' },
              { kind: 'save', session: 0, change: 'add', pick: 0 },
              { kind: 'save', session: 0, change: 'drop-newest', pick: 0 },
              { kind: 'apply' },
            ],
          ],
        ],
      },
    );
    // 150 runs, each opening and reopening a store: seconds on an idle machine, past the default bound on a busy one.
  }, 60_000);

  it('a commit that failed (a full disk) is not taken as written: saved again, the same objects are written', async () => {
    const store = open(tempDataDir());
    await save(store, 'filler', { n: 0, schemas: {}, component_hints: [] });
    const pages = (store.db.prepare('PRAGMA page_count').get() as { page_count: number }).page_count;
    store.db.exec(`PRAGMA max_page_count = ${pages}`);
    const big = { screen: { blob: 'x'.repeat(200_000) } };
    const hints = [hint('pan')];
    // s1's fields are written before s2's too large one fails the commit.
    store.save('s1', () => stored('s1', { n: 1, schemas: schemasA, component_hints: hints }));
    store.save('s2', () => stored('s2', { n: 1, schemas: big, component_hints: [] }));
    const refused: string[] = [];
    store.onRefused((sessionIds) => refused.push(...sessionIds));
    await expect(store.commit()).rejects.toThrow(/full/);
    // The refused saves are dropped, and their sessions named so that their running state is too.
    expect(refused).toEqual(['s1', 's2']);
    expect(store.load('s1')).toBeUndefined();
    store.db.exec('PRAGMA max_page_count = 1073741823');
    // The same objects saved again (as the sessions would be, woken): none taken as written before.
    store.save('s1', () => stored('s1', { n: 1, schemas: schemasA, component_hints: hints }));
    store.save('s2', () => stored('s2', { n: 1, schemas: big, component_hints: [] }));
    await store.commit();
    expect(journalRows(store, 's1')).toEqual([{ schemas: 1, hints: ['pan'] }]);
    expect(store.load('s1')?.context).toEqual({ n: 1, schemas: schemasA, component_hints: hints });
    expect(store.load('s2')?.context).toEqual({ n: 1, schemas: big, component_hints: [] });
    store.close();
  });

  it('a file from before these columns (schema 2) opens, its sessions keeping the schemas and hints their state holds', async () => {
    const dataDir = tempDataDir();
    const db = new DatabaseSync(join(dataDir, DATABASE_FILE));
    db.exec(MIGRATIONS[0]!);
    db.exec(MIGRATIONS[1]!);
    db.exec('PRAGMA user_version = 2');
    const old = (n: number) =>
      JSON.stringify({
        value: { voice: 'inactive' },
        context: { n, schemas: schemasA, component_hints: [hint('pan')] },
      });
    db.prepare(
      "INSERT INTO sessions (session_id, state, voice, created_at, last_activity_at) VALUES ('applied', ?, 'inactive', 1, 2)",
    ).run(old(1));
    db.prepare(
      "INSERT INTO session_journal (seq, session_id, state, voice, created_at, last_activity_at) VALUES (1, 'journaled', ?, 'inactive', 1, 2)",
    ).run(old(2));
    db.close();

    const store = open(dataDir);
    expect((store.db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version).toBe(
      MIGRATIONS.length,
    );
    expect(store.load('applied')?.context).toEqual({ n: 1, schemas: schemasA, component_hints: [hint('pan')] });
    expect(store.load('journaled')?.context).toEqual({ n: 2, schemas: schemasA, component_hints: [hint('pan')] });
    // Saved again from what was loaded: written whole into the new columns.
    const loaded = store.load('applied')!.context as Context;
    await save(store, 'applied', { ...loaded, n: 3 });
    expect(store.count()).toBe(2);
    expect(store.load('applied')?.context).toEqual({ n: 3, schemas: schemasA, component_hints: [hint('pan')] });
    store.close();
  });
});

describe('a field session (schemas registered, fields typed) over HTTP, on STORE=sqlite', () => {
  const body = (fields: object) => ({ session_id: 'f1', user_id: 'u1', ...fields });
  const post = (h: Harness, fields: object) => h.http.post('/v1/events').send(body(fields));
  const views = async (h: Harness) => ({
    session: (await h.http.get('/api/sessions/f1')).body as unknown,
    context: (await h.http.get('/v1/assistant/context/f1')).body as unknown,
  });

  it('keeps what every event built across a crash, while events after the schemas write only their own part', async () => {
    const h = createHarness({ env: { STORE: 'sqlite' } });
    for (const screen of ['pan_details', 'personal_details', 'address']) {
      expect(
        (
          await post(h, {
            event: 'screen_schema',
            screen,
            screen_id: screen,
            properties: { ...panSchema, screen_id: screen },
          })
        ).status,
      ).toBe(200);
    }
    const input = (component_id: string, hint: string) =>
      post(h, {
        event: 'component_input',
        screen: 'pan_details',
        screen_id: 'pan_details',
        component_id,
        component_type: 'text_input',
        hint,
        masked: false,
      });
    await input('pan_field', 'ABCDE1234F');
    await post(h, { event: 'screen_state', screen: 'pan_details', screen_id: 'pan_details' });
    await post(h, { event: 'analytics_data', event_name: 'kyc_step_started', data: { step: 'pan_details' } });
    await input('dob_field', '01/01/1990');

    const store = h.store.sessions as SqliteStore;
    const events = store.db
      .prepare(
        "SELECT json_extract(state, '$.context.latest_event.event') AS event FROM session_journal WHERE session_id = 'f1' ORDER BY seq",
      )
      .all() as { event: string }[];
    const rows = journalRows(store, 'f1').map((row, index) => ({ event: events[index]!.event, ...row }));
    // After the schemas, each input wrote only its own component's hint, and the screen change and the analytics event nothing apart.
    expect(rows.slice(-4)).toEqual([
      { event: 'component_input', schemas: 0, hints: ['pan_field'] },
      { event: 'screen_state', schemas: 0, hints: [] },
      { event: 'analytics_data', schemas: 0, hints: [] },
      { event: 'component_input', schemas: 0, hints: ['dob_field'] },
    ]);
    const before = await views(h);
    expect(JSON.stringify(before)).toContain('dob_field');
    const after = restartAfterCrash(h);
    expect(await views(after)).toEqual(before);
  });
});
