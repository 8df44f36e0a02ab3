import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { SimulatedClock } from 'xstate';
import { describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openStore } from '../../src/store/open-store.js';
import { DATABASE_FILE, StoreOpenError } from '../../src/store/sqlite-opening.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { createHarness, restartAfterCrash, settle, tempDataDir } from '../support/harness.js';
import { startService } from '../support/service-process.js';

const open = (dataDir: string) =>
  openStore(loadConfig({ STORE: 'sqlite', DATA_DIR: dataDir }).store, new SimulatedClock());

function openError(dataDir: string): string {
  try {
    open(dataDir);
  } catch (error) {
    expect(error).toBeInstanceOf(StoreOpenError);
    return (error as Error).message;
  }
  throw new Error('opened');
}

describe('a database that cannot be used stops start-up with one line naming the file and what to do', () => {
  it('a corrupt file', () => {
    const dir = tempDataDir();
    writeFileSync(join(dir, DATABASE_FILE), 'this is not a database, it only has the name of one'.repeat(200));
    const message = openError(dir);
    expect(message).toContain(join(dir, DATABASE_FILE));
    expect(message).toMatch(/not a database.*move it .*aside.*or restore a backup/);
    expect(message).not.toContain('\n');
    // The failed open let go of the DATA_DIR: with the file moved aside, the next one starts empty.
    rmSync(join(dir, DATABASE_FILE));
    const store = open(dir).sessions as SqliteStore;
    expect(store.count()).toBe(0);
    store.close();
  });

  it('the real process, on a corrupt file: exit 1 and that one line on stderr', { timeout: 60_000 }, async () => {
    const dir = tempDataDir();
    writeFileSync(join(dir, DATABASE_FILE), 'garbage'.repeat(1000));
    const service = startService({ STORE: 'sqlite', DATA_DIR: dir });
    await expect(service.url).rejects.toThrow('exited early with 1');
    expect(service.stderr()).toMatch(
      new RegExp(`^store: cannot use ${join(dir, DATABASE_FILE)}: file is not a database; [^\n]+\n$`),
    );
  });

  it('a file another program holds locked: says so, and that the data is intact (not to move it aside)', () => {
    const dir = tempDataDir();
    open(dir).sessions.close();
    // A backup or an sqlite3 shell in the middle of a write: the open waits its busy timeout, then gives up.
    const other = new DatabaseSync(join(dir, DATABASE_FILE));
    other.exec('BEGIN IMMEDIATE');
    try {
      const message = openError(dir);
      expect(message).toMatch(/locked.*another program holds a lock on the file.*the data is intact$/);
      expect(message).not.toMatch(/aside/);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
  });

  it('a path that cannot be opened as a database file', () => {
    const dir = tempDataDir();
    mkdirSync(join(dir, DATABASE_FILE));
    expect(openError(dir)).toMatch(
      new RegExp(`${DATABASE_FILE}: unable to open database file; the process cannot write it: fix the permissions`),
    );
  });

  it('a DATA_DIR that cannot be created', () => {
    const file = join(tempDataDir(), 'a-file');
    writeFileSync(file, '');
    expect(openError(join(file, 'data'))).toMatch(
      /^store: cannot create DATA_DIR .*a-file\/data: .*set DATA_DIR to a writable directory$/,
    );
  });

  it('a database from a newer schema', () => {
    const dir = tempDataDir();
    const store = open(dir).sessions as SqliteStore;
    store.db.exec('PRAGMA user_version = 99');
    store.close();
    expect(openError(dir)).toMatch(/schema version 99 is newer than this release knows/);
  });
});

describe('a full disk', () => {
  it('turns writes into 503 with Retry-After, never a lost acknowledgement; /health reports it; writes resume once there is room', async () => {
    const dir = tempDataDir();
    mkdirSync(dir, { recursive: true });
    const h = createHarness({ env: { STORE: 'sqlite', DATA_DIR: dir } });
    const acknowledged: string[] = [];
    const store = h.store.sessions as SqliteStore;
    const pages = (store.db.prepare('PRAGMA page_count').get() as { page_count: number }).page_count;
    // The file may grow by only a few pages: the same error a full disk gives (SQLITE_FULL).
    store.db.exec(`PRAGMA max_page_count = ${pages + 2}`);
    const big = 'x'.repeat(900);
    let refused = 0;
    for (let i = 0; i < 60 && refused === 0; i += 1) {
      const res = await h.http
        .post('/v1/events')
        .send({ session_id: `s${i}`, event: 'screen_state', screen: 'pan_details', properties: { big } });
      if (res.status === 200) acknowledged.push(`s${i}`);
      else {
        refused += 1;
        expect(res.status).toBe(503);
        expect(res.headers['retry-after']).toBe('5');
        expect(res.body.detail).toMatch(/could not be stored/);
      }
    }
    expect(refused).toBe(1);
    const health = await h.http.get('/health');
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({
      status: 'store_failing',
      store: { kind: 'sqlite', status: 'failing', last_error: expect.stringMatching(/full/) },
    });
    // Its own store refuses: take this process out of the load balancer, but do not restart it.
    const ready = await h.http.get('/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ status: 'store_failing' });
    expect(await h.http.get('/health/live')).toMatchObject({ status: 200, body: { status: 'ok' } });

    store.db.exec('PRAGMA max_page_count = 1073741823');
    expect((await h.http.post('/v1/events').send({ session_id: 'later', event: 'identity' })).status).toBe(200);
    expect((await h.http.get('/health')).body.status).toBe('ok');
    expect((await h.http.get('/health/ready')).status).toBe(200);

    const after = restartAfterCrash(h);
    for (const sessionId of [...acknowledged, 'later'])
      expect((await after.http.get(`/api/sessions/${sessionId}`)).status, sessionId).toBe(200);
    const ids = ((await after.http.get('/api/activity?limit=1000')).body.items as { id: string }[]).map((item) =>
      Number(item.id),
    );
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => i + 1));
    expect(ids.length).toBeGreaterThanOrEqual(acknowledged.length + 1);
  });
});

describe('a command to the client goes out once its decision is kept', () => {
  it('a trigger refused with 503 pushes nothing; one committed pushes suggest_start_voice_agent after its commit', async () => {
    const h = createHarness({ env: { STORE: 'sqlite' } });
    await h.http.post('/v1/events').send({ session_id: 's1', event: 'screen_state', screen: 'pan_details' });
    const pushed: string[] = [];
    h.system.sessionHost.subscribe('s1', (command) => pushed.push(command.command));
    const store = h.store.sessions as SqliteStore;
    // Every commit fails, as on a disk that refuses writes.
    store.db.exec('PRAGMA query_only = 1');
    const evaluate = () =>
      h.http
        .post('/v1/assistant/trigger/evaluate')
        .send({ session_id: 's1', signals: { errors: ['a', 'b'], screen: 'pan_details' } });
    expect((await evaluate()).status).toBe(503);
    // The commit's turn and the refusal's are over: a command sent before its commit would be here.
    await settle();
    expect(pushed).toEqual([]);

    store.db.exec('PRAGMA query_only = 0');
    // The retry finds the session as the refused request found it: no cooldown, so it fires.
    expect((await evaluate()).body).toMatchObject({ trigger: true, reason: 'repeated_errors' });
    await vi.waitFor(() => expect(pushed).toEqual(['suggest_start_voice_agent']));
    expect(((await h.http.get('/api/activity?kind=trigger')).body.items as unknown[]).length).toBe(1);
  });
});

describe('a request refused with 503 changes nothing: its retry finds the session as it was', () => {
  const refusing = async (h: ReturnType<typeof createHarness>, send: () => Promise<{ status: number }>) => {
    const store = h.store.sessions as SqliteStore;
    store.db.exec('PRAGMA query_only = 1');
    expect((await send()).status).toBe(503);
    store.db.exec('PRAGMA query_only = 0');
  };

  it('a voice start and stop: the retry is the first start (not a resume) and the stop of an active session, each recorded', async () => {
    const h = createHarness({ env: { STORE: 'sqlite' } });
    await h.http.post('/v1/events').send({ session_id: 'v1', event: 'screen_state', screen: 'pan_details' });
    const start = () =>
      h.http.post('/v1/assistant/session/start').send({ session_id: 'v1', user_id: 'u1', screen: 'pan_details' });
    const stop = () => h.http.post('/v1/assistant/session/stop').send({ session_id: 'v1' });
    await refusing(h, start);
    expect((await h.http.get('/api/sessions/v1')).body).toMatchObject({ active: false });
    expect((await start()).status).toBe(200);
    await refusing(h, stop);
    expect((await h.http.get('/api/sessions/v1')).body).toMatchObject({ active: true });
    expect((await stop()).body).toMatchObject({ active: false });
    const kinds = (
      (await h.http.get('/api/activity?session_id=v1')).body.items as {
        kind: string;
        payload: Record<string, unknown>;
      }[]
    ).map(
      (item) =>
        `${item.kind}${item.kind === 'session_start' ? `:${String(item.payload.resumed)}` : item.kind === 'session_stop' ? `:${String(item.payload.was_active)}` : ''}`,
    );
    expect(kinds).toEqual(['event', 'session_start:false', 'session_stop:true', 'reengagement']);
  });

  it('an event that begins a session: refused, no session is left behind', async () => {
    const h = createHarness({ env: { STORE: 'sqlite' } });
    await refusing(h, () =>
      h.http.post('/v1/events').send({ session_id: 'new', event: 'screen_state', screen: 'pan_details' }),
    );
    expect((await h.http.get('/api/sessions/new')).status).toBe(404);
    expect(h.system.sessionHost.size).toBe(0);
    expect(
      (await h.http.post('/v1/events').send({ session_id: 'new', event: 'screen_state', screen: 'otp' })).status,
    ).toBe(200);
    expect((await h.http.get('/api/sessions/new')).body).toMatchObject({ screen: 'otp' });
  });
});

describe('a DATA_DIR is used by one process at a time', () => {
  const inUse =
    /^store: DATA_DIR .+ is in use by another process of this service \(it holds .+kyc-assistant\.lock\); stop it first, or give this process a DATA_DIR of its own$/;

  it('a second store on the same DATA_DIR is refused until the first closes, or its process dies', () => {
    const dir = tempDataDir();
    const first = open(dir);
    const draft = (n: number) => ({
      kind: 'event' as const,
      at: n,
      session_id: 's1',
      user_id: null,
      payload: { n },
      trace: { trace_id: 't', request_id: `r${n}` },
    });
    first.activity.append(draft(1));
    expect(openError(dir)).toMatch(inUse);
    // The refused open changed nothing: the first store goes on.
    first.activity.append(draft(2));
    (first.sessions as SqliteStore).close();

    const second = open(dir);
    expect(second.activity.after(0).items.map((item) => item.payload)).toEqual([{ n: 1 }, { n: 2 }]);
    // A crash lets go of the claim with the process.
    (second.sessions as SqliteStore).abandon();
    const third = open(dir);
    expect(third.activity.after(0).items).toHaveLength(2);
    (third.sessions as SqliteStore).close();
  });

  it(
    'the real process: a second one on a DATA_DIR in use exits 1 with one line, the first goes on, and after a kill -9 the next one starts',
    { timeout: 60_000 },
    async () => {
      const dir = tempDataDir();
      const first = startService({ STORE: 'sqlite', DATA_DIR: dir });
      const url = await first.url;
      const post = (base: string, requestId: string) =>
        fetch(`${base}/v1/events`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-request-id': requestId },
          body: JSON.stringify({ session_id: 's1', event: 'identity' }),
        });
      expect((await post(url, 'before')).status).toBe(200);

      const second = startService({ STORE: 'sqlite', DATA_DIR: dir });
      await expect(second.url).rejects.toThrow('exited early with 1');
      expect(second.stderr()).toMatch(
        new RegExp(`^store: DATA_DIR ${dir} is in use by another process of this service [^\n]+\n$`),
      );

      expect((await post(url, 'after')).status).toBe(200);
      const exited = new Promise((resolve) => first.child.once('exit', resolve));
      first.child.kill('SIGKILL');
      await exited;

      const third = startService({ STORE: 'sqlite', DATA_DIR: dir });
      const thirdUrl = await third.url;
      const items = (await (await fetch(`${thirdUrl}/api/activity?session_id=s1`)).json()) as {
        items: { trace: { request_id: string } }[];
      };
      expect(items.items.map((item) => item.trace.request_id)).toEqual(['before', 'after']);
      third.child.kill('SIGKILL');
    },
  );
});
