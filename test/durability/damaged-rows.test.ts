import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { storedDamage } from '../../src/actor-system/stored-session-check.js';
import { DATABASE_FILE } from '../../src/store/sqlite-opening.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { RAW_PAN, clientJourney } from '../fixtures/client-events.js';
import type { Harness } from '../support/harness.js';
import { advance, createHarness } from '../support/harness.js';

const SECOND = 1000;
const post = (h: Harness, body: object) => h.http.post('/v1/events').send(body);

/** The service stops (its journal applied to the tables), the file is edited by hand, and the service starts again on it. */
function restartEdited(h: Harness, edit: (db: DatabaseSync) => void): Harness {
  if (!(h.store.sessions instanceof SqliteStore)) throw new Error('needs STORE=sqlite');
  h.store.sessions.close();
  h.sdkConfig.close();
  const db = new DatabaseSync(join(h.env.DATA_DIR!, DATABASE_FILE));
  edit(db);
  db.close();
  return createHarness({ env: h.env, startAt: h.clock.now() });
}

const discarded = (h: Harness) =>
  h.logs.parsed().filter((line) => line.msg === 'stored session cannot be restored; session discarded');

async function twoSessions(): Promise<Harness> {
  const h = createHarness({ env: { STORE: 'sqlite' } });
  for (const sessionId of ['s1', 's2'])
    expect(
      (await post(h, { session_id: sessionId, user_id: 'u1', event: 'screen_state', screen: 'pan_details' })).status,
    ).toBe(200);
  return h;
}

describe('a stored session the machine cannot run is set aside, and the process keeps running', () => {
  it('one whose idle deadline passed while down, its trigger memory gone: removed at its wake, not a crash at every start', async () => {
    const h = await twoSessions();
    // Its last activity at the epoch puts its idle deadline long past, so its wake only checks it can be evicted.
    const after = restartEdited(h, (db) =>
      db.exec(
        `UPDATE sessions SET state = json_remove(state, '$.context.trigger'), wake_at = 0, last_activity_at = 0 WHERE session_id = 's1'`,
      ),
    );
    expect(after.system.sessionHost.size).toBe(2);
    advance(after.clock, SECOND);
    expect(discarded(after)).toEqual([
      expect.objectContaining({ level: 50, session_id: 's1', problem: expect.stringMatching(/^context\.trigger: /) }),
    ]);
    expect(after.system.sessionHost.size).toBe(1);
    expect((await after.http.get('/api/sessions/s1')).status).toBe(404);
    expect((await after.http.get('/api/sessions/s2')).body.screen).toBe('pan_details');
    // The id is free again: the next event begins it anew.
    expect((await post(after, { session_id: 's1', event: 'screen_state', screen: 'otp' })).status).toBe(200);
    expect((await after.http.get('/api/sessions/s1')).body.screen).toBe('otp');
    expect(after.system.sessionHost.size).toBe(2);
  });

  it('one whose state is not JSON: a read answers 404 and the log names the problem without quoting the text', async () => {
    const h = await twoSessions();
    const after = restartEdited(h, (db) =>
      db.prepare(`UPDATE sessions SET state = ? WHERE session_id = 's1'`).run(`{"hint":"${RAW_PAN}"`),
    );
    const read = await after.http.get('/api/sessions/s1');
    expect(read.status).toBe(404);
    expect(read.body).toEqual({ detail: 'session s1 not found' });
    expect(discarded(after)).toEqual([
      expect.objectContaining({ session_id: 's1', problem: 'stored state is not JSON' }),
    ]);
    expect(after.logs.text).not.toContain(RAW_PAN);
    expect(after.system.sessionHost.size).toBe(1);
    const listed = (await after.http.get('/api/sessions')).body.sessions as { session_id: string }[];
    expect(listed.map((row) => row.session_id)).toEqual(['s2']);
  });

  it('one whose context has a timer of the wrong type: a command to it begins the session anew', async () => {
    const h = await twoSessions();
    const after = restartEdited(h, (db) =>
      db.exec(`UPDATE sessions SET state = json_set(state, '$.context.idle_timer', 'soon') WHERE session_id = 's1'`),
    );
    const res = await post(after, { session_id: 's1', event: 'screen_state', screen: 'otp' });
    expect(res.status).toBe(200);
    expect(discarded(after)).toEqual([
      expect.objectContaining({ session_id: 's1', problem: expect.stringMatching(/^context\.idle_timer: /) }),
    ]);
    const session = (await after.http.get('/api/sessions/s1')).body as { screen: string; created_at: string };
    expect(session.screen).toBe('otp');
    expect(after.system.sessionHost.size).toBe(2);
  });

  it('one filed under another session id is not run as that other session', async () => {
    const h = await twoSessions();
    const after = restartEdited(h, (db) =>
      db.exec(`UPDATE sessions SET state = json_set(state, '$.context.session_id', 's2') WHERE session_id = 's1'`),
    );
    expect((await after.http.get('/api/sessions/s1')).status).toBe(404);
    expect(discarded(after)).toEqual([
      expect.objectContaining({ session_id: 's1', problem: expect.stringContaining('is not the row') }),
    ]);
    expect((await after.http.get('/api/sessions/s2')).body.session_id).toBe('s2');
  });

  it('a store that cannot be read at the moment is not damage: the read fails, and the row stays for the next one', async () => {
    const h = await twoSessions();
    const after = restartEdited(h, () => {});
    const file = join(after.env.DATA_DIR!, DATABASE_FILE);
    const other = new DatabaseSync(file);
    other.exec('ALTER TABLE sessions RENAME TO sessions_away');
    expect((await after.http.get('/api/sessions/s1')).status).toBe(500);
    other.exec('ALTER TABLE sessions_away RENAME TO sessions');
    other.close();
    expect(discarded(after)).toEqual([]);
    expect((await after.http.get('/api/sessions/s1')).body.screen).toBe('pan_details');
  });
});

describe('a damaged row in the journal a crash left', () => {
  it('does not stop start-up: the journal is applied, and only the damaged session is set aside', async () => {
    const h = await twoSessions();
    expect((await post(h, { session_id: 's1', event: 'screen_state', screen: 'otp' })).status).toBe(200);
    // A crash: what was committed stays in the journal, not yet applied to the tables.
    if (!(h.store.sessions instanceof SqliteStore)) throw new Error('needs STORE=sqlite');
    h.store.sessions.abandon();
    h.sdkConfig.close();
    const db = new DatabaseSync(join(h.env.DATA_DIR!, DATABASE_FILE));
    const journaled = db.prepare(`SELECT count(*) AS n FROM session_journal`).get() as { n: number };
    expect(journaled.n).toBeGreaterThan(0);
    db.exec(`UPDATE session_journal SET state = '{"fields":' WHERE session_id = 's1'`);
    db.close();
    const after = createHarness({ env: h.env, startAt: h.clock.now() });
    expect((await after.http.get('/api/sessions/s1')).status).toBe(404);
    expect(discarded(after)).toEqual([
      expect.objectContaining({ session_id: 's1', problem: 'stored state is not JSON' }),
    ]);
    expect((await after.http.get('/api/sessions/s2')).body.screen).toBe('pan_details');
  });
});

describe('what the service stores passes the check (it never discards its own sessions)', () => {
  it('sessions holding every kind of state a field client makes come back after a restart', async () => {
    const h = createHarness({ env: { STORE: 'sqlite', REENGAGEMENT_INACTIVITY_SECONDS: '300' } });
    for (const body of clientJourney('field')) expect((await post(h, body)).status).toBe(200);
    expect(
      (
        await h.http
          .post('/api/dropoff/register')
          .send({ session_id: 'field', user_id: 'user-42', phone: '+91-98765-43210', reason: 'app_backgrounded' })
      ).status,
    ).toBe(200);
    const evaluated = await h.http.post('/v1/assistant/trigger/evaluate').send({
      session_id: 'field',
      signals: { screen: 'pan_details', time_spent: 25, errors: ['pan_invalid'], idle_seconds: 0 },
    });
    expect(evaluated.status).toBe(200);
    expect(
      (
        await h.http
          .post('/v1/assistant/session/start')
          .send({ session_id: 'voice', user_id: 'u1', screen: 'pan_details' })
      ).status,
    ).toBe(200);
    // A handoff nobody took: the call back owed is state the session keeps (docs/explanation/handoff.md).
    expect(
      (await post(h, { session_id: 'voice', event: 'handoff_requested', properties: { reason: 'asked' } })).status,
    ).toBe(200);
    expect((await post(h, { session_id: 'voice', event: 'handoff_unanswered' })).status).toBe(200);
    expect((await h.http.post('/v1/assistant/session/stop').send({ session_id: 'voice' })).status).toBe(200);
    expect(
      (await h.http.post('/v1/assistant/session/start').send({ session_id: 'live', user_id: 'u2', screen: 'otp' }))
        .status,
    ).toBe(200);

    const ids = ['field', 'voice', 'live'];
    for (const id of ids) expect(storedDamage(h.store.sessions.load(id)!), id).toBeUndefined();
    const before = await Promise.all(
      ids.map(async (id) => (await h.http.get(`/api/sessions/${id}`)).body as Record<string, unknown>),
    );
    const after = restartEdited(h, () => {});
    advance(after.clock, SECOND);
    expect(discarded(after)).toEqual([]);
    for (const [index, id] of ids.entries()) {
      const read = await after.http.get(`/api/sessions/${id}`);
      expect(read.status, id).toBe(200);
      expect(read.body.component_hints).toEqual(before[index]!.component_hints);
    }
    expect((await after.http.get('/api/reengagement/voice')).body).toMatchObject({
      recommended: true,
      reason: 'handoff_unanswered',
    });
  });
});

describe('a damaged activity row is left out of reads, not a failure of the whole log', () => {
  const unreadable = (h: Harness) =>
    h.logs
      .parsed()
      .map((line) => /^activity item (\d+) unreadable; left out of reads$/.exec(String(line.msg))?.[1])
      .filter((id) => id !== undefined);
  const ids = (items: { id: string }[]) => items.map((item) => item.id);

  it('listings, a session listing and the SSE catch-up read the rest; the row is reported once', async () => {
    const h = createHarness({ env: { STORE: 'sqlite' } });
    for (const sessionId of ['s1', 's2', 's1'])
      expect((await post(h, { session_id: sessionId, event: 'screen_state', screen: 'pan_details' })).status).toBe(200);
    const after = restartEdited(h, (db) => {
      db.exec(`UPDATE activity SET item = '{broken' WHERE id = 2`);
      // Valid JSON, but another item's id: not this row's item either.
      db.exec(`UPDATE activity SET item = json_set(item, '$.id', '1') WHERE id = 3`);
    });
    const listed = await after.http.get('/api/activity?limit=10');
    expect(listed.status).toBe(200);
    expect(ids(listed.body.items)).toEqual(['1']);
    expect(ids((await after.http.get('/api/activity?session_id=s1')).body.items)).toEqual(['1']);
    expect(ids(after.system.activity.after(0).items)).toEqual(['1']);
    // New items after the damaged ones read as ever.
    expect((await post(after, { session_id: 's2', event: 'screen_state', screen: 'otp' })).status).toBe(200);
    expect(ids((await after.http.get('/api/activity?session_id=s2')).body.items)).toEqual(['4']);
    expect(unreadable(after).sort()).toEqual(['2', '3']);
  });
});
