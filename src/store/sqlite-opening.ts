/**
 * Opening the SQLite store: the DATA_DIR created and claimed, the file opened with its pragmas,
 * migrated and proved usable. Every failure is one StoreOpenError naming the file and what to do,
 * so start-up stops with one line an operator can act on.
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { DataDirClaim } from './data-dir-claim.js';
import { DataDirInUseError, claimDataDir } from './data-dir-claim.js';
import { migrate } from './migrations.js';

export const DATABASE_FILE = 'kyc-assistant.sqlite';

/** The WAL's size, in pages, at which the main connection checkpoints it itself (64 MiB at 16 KiB). */
export const WAL_BOUND_PAGES = 4_000;

/** The database cannot be used: start-up stops with this one line. */
export class StoreOpenError extends Error {
  override name = 'StoreOpenError';
}

/** Creates the DATA_DIR if need be and claims it for this store; any failure is one StoreOpenError saying what to do. */
export function claimStoreDir(dataDir: string): DataDirClaim {
  try {
    mkdirSync(dataDir, { recursive: true });
  } catch (error) {
    throw new StoreOpenError(
      `store: cannot create DATA_DIR ${resolve(dataDir)}: ${reason(error)}; set DATA_DIR to a writable directory`,
    );
  }
  try {
    return claimDataDir(dataDir);
  } catch (error) {
    if (error instanceof DataDirInUseError) throw new StoreOpenError(`store: ${error.message}`);
    throw new StoreOpenError(
      `store: cannot claim DATA_DIR ${resolve(dataDir)}: ${reason(error)}; fix the permissions of DATA_DIR, or set DATA_DIR elsewhere`,
    );
  }
}

/** Opens, checks and migrates the database; any failure is one StoreOpenError naming the file and what to do. */
export function openDatabase(file: string, options: { sync: 'normal' | 'full' }): DatabaseSync {
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(file);
    db.exec('PRAGMA busy_timeout = 5000');
    // 16 KiB pages for a new file (an existing one keeps its own): a session's state, 1-2 KB, fills
    // a tenth of a page rather than half, so a commit and an apply write fewer pages
    // (a gain at 1,000 sessions, none seen at 20,000: docs/decisions/0012-where-a-durable-request-goes.md). Set before
    // WAL, which fixes the page size.
    db.exec('PRAGMA page_size = 16384');
    db.exec('PRAGMA journal_mode = WAL');
    db.exec(`PRAGMA synchronous = ${options.sync === 'full' ? 'FULL' : 'NORMAL'}`);
    // 32 MiB of page cache: the sessions in use and the newest activity stay in memory.
    db.exec('PRAGMA cache_size = -32768');
    // A worker's connection copies the WAL back (wal-checkpointer.ts); this connection checkpoints
    // only when the WAL reaches 4,000 pages, a bound if the worker falls behind.
    db.exec(`PRAGMA wal_autocheckpoint = ${WAL_BOUND_PAGES}`);
    // What is deleted is overwritten with zeros, so an erased user's rows do not linger in free
    // pages of the file (docs/decisions/0029-erasure-in-the-files-bytes.md).
    db.exec('PRAGMA secure_delete = ON');
    migrate(db);
    // Reading every table and writing once proves the file is a database this process can use.
    db.prepare('SELECT count(*) FROM sessions').get();
    db.prepare('SELECT count(*) FROM activity').get();
    db.exec('BEGIN IMMEDIATE; COMMIT');
    return db;
  } catch (error) {
    try {
      db?.close();
    } catch {
      // Already unusable; the error below says why.
    }
    const message = reason(error);
    const advice = /not a database|malformed|corrupt/i.test(message)
      ? 'the file is damaged: move it (and its -wal and -shm files) aside to start empty, or restore a backup'
      : /readonly|read-only|unable to open|permission|access/i.test(message)
        ? 'the process cannot write it: fix the permissions of the file and DATA_DIR, or set DATA_DIR elsewhere'
        : /locked|busy/i.test(message)
          ? // Another program (a backup, an sqlite3 shell) holds the file: moving it aside would throw the data away.
            'another program holds a lock on the file (a backup, an sqlite3 shell): let it finish or stop it, then start again; the data is intact'
          : 'move the file aside to start empty, or restore a backup';
    throw new StoreOpenError(`store: cannot use ${file}: ${message}; ${advice}`);
  }
}

const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error));
