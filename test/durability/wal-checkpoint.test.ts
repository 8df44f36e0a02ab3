import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ActivityDraft } from '../../src/domain/activity.js';
import { DATABASE_FILE, WAL_BOUND_PAGES } from '../../src/store/sqlite-opening.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { COMMITS_PER_CHECKPOINT } from '../../src/store/wal-checkpointer.js';
import { START_TIME, tempDataDir } from '../support/harness.js';

const open = (dataDir: string) =>
  new SqliteStore({ dataDir, sync: 'normal', retentionItems: 1_000_000, retentionDays: 0, now: () => START_TIME });

const draft = (n: number): ActivityDraft => ({
  kind: 'event',
  at: START_TIME + n,
  session_id: `s${n % 7}`,
  user_id: null,
  // About a page of JSON a few items: enough frames that a checkpoint visibly grows the file.
  payload: { n, text: 'x'.repeat(2_000) },
  trace: { trace_id: `t${n}`, request_id: `r${n}` },
});

/** `commits` commits of 20 items each. */
async function write(store: SqliteStore, commits: number, from = 0): Promise<number> {
  let n = from;
  for (let commit = 0; commit < commits; commit += 1) {
    for (let item = 0; item < 20; item += 1) store.append(draft((n += 1)));
    await store.commit();
  }
  return n;
}

const size = (file: string) => (existsSync(file) ? statSync(file).size : 0);

describe('the WAL is copied back on a worker connection, not in the requests commits', () => {
  it('after enough commits the worker checkpoints: the database file grows with what the WAL held, the main connection having copied nothing', async () => {
    const dataDir = tempDataDir();
    const store = open(dataDir);
    const file = join(dataDir, DATABASE_FILE);
    // The main connection would copy back only at the bound, far above what this test writes.
    expect(
      (store.db.prepare('PRAGMA wal_autocheckpoint').get() as { wal_autocheckpoint: number }).wal_autocheckpoint,
    ).toBe(WAL_BOUND_PAGES);
    await write(store, COMMITS_PER_CHECKPOINT - 1);
    const before = size(file);
    expect(store.checkpointer.done.count).toBe(0);

    const checkpoint = store.checkpointer.next();
    await write(store, 1, 1_000);
    const outcome = await checkpoint;
    expect(outcome.ok).toBe(true);
    expect(outcome.checkpointed).toBeGreaterThan(0);
    expect(outcome.checkpointed).toBe(outcome.log);
    expect(size(file)).toBeGreaterThan(before);
    store.close();
  });

  it('one checkpoint at a time: commits made while one runs ask for the next when it ends', async () => {
    const store = open(tempDataDir());
    const first = store.checkpointer.next();
    await write(store, COMMITS_PER_CHECKPOINT);
    // The first runs; these commits arrive meanwhile or after, and are copied by a later one.
    await write(store, COMMITS_PER_CHECKPOINT, 1_000);
    await first;
    const second = await store.checkpointer.next();
    expect(second.ok).toBe(true);
    expect(store.checkpointer.done.count).toBeGreaterThanOrEqual(2);
    store.close();
  });

  it('a clean close leaves no WAL to replay, with the worker started; abandoning the store with it loses nothing committed', async () => {
    const dataDir = tempDataDir();
    const file = join(dataDir, DATABASE_FILE);
    const store = open(dataDir);
    const checkpointed = store.checkpointer.next();
    let n = await write(store, COMMITS_PER_CHECKPOINT);
    await checkpointed;
    n = await write(store, 3, n);
    store.close();
    expect(existsSync(`${file}-wal`)).toBe(false);

    const crashed = open(dataDir);
    const ran = crashed.checkpointer.next();
    n = await write(crashed, COMMITS_PER_CHECKPOINT, n);
    await ran;
    crashed.abandon();

    const reopened = open(dataDir);
    expect(reopened.bounds().lastId).toBe(n);
    expect(reopened.list({ limit: 1 })[0]?.payload.n).toBe(n);
    reopened.close();
  });

  it('a store that never commits enough never starts the worker, and closes as before', async () => {
    const dataDir = tempDataDir();
    const store = open(dataDir);
    await write(store, 2);
    store.close();
    expect(store.checkpointer.done.count).toBe(0);
    expect(existsSync(join(dataDir, `${DATABASE_FILE}-wal`))).toBe(false);
  });
});
