import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { SqliteStore } from '../../src/store/sqlite-store.js';
import { MAX_KEPT_REPLIES } from '../../src/store/sqlite-store.js';
import type { Harness } from '../support/harness.js';
import { advance, createHarness, restartAfterCrash, tempDataDir } from '../support/harness.js';
import { startService } from '../support/service-process.js';

const failure = {
  session_id: 's1',
  event: 'validation_failed',
  screen: 'pan_details',
  component_id: 'pan_field',
  component_type: 'text_input',
  errors: ['pan_invalid'],
  properties: { field_status: 'ERROR', semantic_slot: 'pan' },
};
const reordered = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(reordered)
    : typeof value === 'object' && value !== null
      ? Object.fromEntries(
          Object.entries(value)
            .reverse()
            .map(([k, v]) => [k, reordered(v)]),
        )
      : value;
const HOUR = 3_600_000;

const send = (h: Harness, body: unknown, key: string) =>
  h.http
    .post('/v1/events')
    .set('Idempotency-Key', key)
    .send(body as object);
const retryCounts = async (h: Harness) =>
  (await h.http.get('/api/sessions/s1')).body.retry_counts as Record<string, number>;
const eventItems = (h: Harness) => h.system.activity.list({ limit: 100, kind: 'event' }).length;

describe('a named request is answered once across restarts: its reply is kept with its change (SQLite)', () => {
  it('after a crash and after a clean stop, a copy gets the first answer and applies nothing; another body with the id is 422', async () => {
    const h = createHarness({ env: { STORE: 'sqlite' } });
    const first = await send(h, failure, 'key-1');
    expect(first.status).toBe(200);

    const crashed = restartAfterCrash(h);
    const afterCrash = await send(crashed, reordered(failure), 'key-1');
    expect(afterCrash.status).toBe(200);
    expect(afterCrash.body).toEqual(first.body);
    expect(await retryCounts(crashed)).toEqual({ pan_field: 1 });
    expect(eventItems(crashed)).toBe(1);

    crashed.system.stop();
    const stopped = createHarness({ env: crashed.env, startAt: crashed.clock.now() });
    expect((await send(stopped, failure, 'key-1')).body).toEqual(first.body);
    const other = await send(stopped, { ...failure, component_id: 'dob_field' }, 'key-1');
    expect(other.status).toBe(422);
    expect(other.body.detail).toMatch(/^Idempotency-Key: already used for a different request/);
    expect(await retryCounts(stopped)).toEqual({ pan_field: 1 });
    expect(eventItems(stopped)).toBe(1);

    // Kept for REPLAY_WINDOW_SECONDS (a day by default), then the id is free again.
    advance(stopped.clock, 24 * HOUR + 1000, HOUR);
    const late = restartAfterCrash(stopped);
    expect((await send(late, failure, 'key-1')).status).toBe(200);
    expect(eventItems(late)).toBe(2);
  });

  it('a refused commit keeps neither the change nor its reply: the retry after the failure and a restart runs', async () => {
    const h = createHarness({ env: { STORE: 'sqlite' } });
    const store = h.store.sessions as SqliteStore;
    store.db.exec("CREATE TRIGGER refuse BEFORE INSERT ON kept_replies BEGIN SELECT RAISE(ABORT, 'disk full'); END");
    expect((await send(h, failure, 'key-2')).status).toBe(503);
    store.db.exec('DROP TRIGGER refuse');
    const again = restartAfterCrash(h);
    expect((await send(again, failure, 'key-2')).status).toBe(200);
    expect(await retryCounts(again)).toEqual({ pan_field: 1 });
  });

  it('a file written before replies were kept without their token loses the replies that hold one when it opens', async () => {
    const h = createHarness({ env: { STORE: 'sqlite' } });
    const store = h.store.sessions as SqliteStore;
    const insert = store.db.prepare(
      'INSERT INTO kept_replies (request_key, fingerprint, reply, at) VALUES (?, ?, ?, ?)',
    );
    insert.run(
      'old-start',
      'f',
      JSON.stringify({
        session_id: 's1',
        room: 'kyc-room-s1',
        token: 'eyJhbGciOiJIUzI1NiJ9.e30.c2lnbmF0dXJl',
        warnings: [],
      }),
      h.clock.now(),
    );
    insert.run('event', 'f', JSON.stringify({ ingested_at_ms: 1, warnings: [] }), h.clock.now());
    // As that release left it: every step before this one applied.
    store.db.exec('PRAGMA user_version = 7');
    const again = restartAfterCrash(h);
    const kept = (again.store.sessions as SqliteStore).db
      .prepare('SELECT request_key FROM kept_replies ORDER BY request_key')
      .all();
    expect(kept).toEqual([{ request_key: 'event' }]);
  });

  it(`keeps at most ${MAX_KEPT_REPLIES.toLocaleString('en-US')} replies, the newest, and none past the window`, () => {
    const h = createHarness({ env: { STORE: 'sqlite' } });
    const store = h.store.sessions as SqliteStore;
    const count = () => (store.db.prepare('SELECT count(*) AS n FROM kept_replies').get() as { n: number }).n;
    const insert = store.db.prepare(
      'INSERT INTO kept_replies (request_key, fingerprint, reply, at) VALUES (?, ?, ?, ?)',
    );
    store.db.exec('BEGIN');
    for (let n = 0; n < MAX_KEPT_REPLIES + 10; n += 1) insert.run(`k${n}`, 'f', '{}', h.clock.now() - 200_000 + n);
    insert.run('old', 'f', '{}', h.clock.now() - 25 * HOUR);
    store.db.exec('COMMIT');
    store.keepReply('newest', { fingerprint: 'f', reply: '{}' });
    return store.commit().then(() => {
      expect(count()).toBeLessThanOrEqual(MAX_KEPT_REPLIES + 1);
      expect(store.keptReply('old')).toBeUndefined();
      expect(store.keptReply('newest')).toEqual({ fingerprint: 'f', reply: '{}' });
    });
  });
});

describe('the real service restarted on the same DATA_DIR (SIGTERM, then kill -9)', { timeout: 60_000 }, () => {
  it('answers a copy of an acknowledged request as the first and applies it once', async () => {
    const env = { STORE: 'sqlite', DATA_DIR: tempDataDir() };
    const post = (url: string, body: unknown) =>
      fetch(`${url}/v1/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'restart-1' },
        body: JSON.stringify(body),
      });
    const session = async (url: string) =>
      (await (await fetch(`${url}/api/sessions/s1`)).json()) as { retry_counts: Record<string, number> };
    const items = async (url: string) =>
      ((await (await fetch(`${url}/api/activity?kind=event&session_id=s1`)).json()) as { items: unknown[] }).items
        .length;

    let service = startService(env);
    let url = await service.url;
    const first = await post(url, failure);
    expect(first.status).toBe(200);
    const firstBody = await first.text();
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      const exited = once(service.child, 'exit');
      service.child.kill(signal);
      await exited;
      service = startService(env);
      url = await service.url;
      const copy = await post(url, reordered(failure));
      expect(copy.status, signal).toBe(200);
      expect(await copy.text(), signal).toBe(firstBody);
      expect((await session(url)).retry_counts, signal).toEqual({ pan_field: 1 });
      expect(await items(url), signal).toBe(1);
    }
    service.child.kill('SIGTERM');
    await once(service.child, 'exit');
  });
});
