import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';

/** The file whose lock says a process of this service uses the DATA_DIR. */
const CLAIM_FILE = 'kyc-assistant.lock';

/** A DATA_DIR this process holds alone until `release`. */
export interface DataDirClaim {
  release(): void;
}

/** Another holder has the DATA_DIR: a second process, or a store of this one still open. */
export class DataDirInUseError extends Error {
  override name = 'DataDirInUseError';
}

/**
 * Claims the DATA_DIR for this store alone. Two processes on one SQLite file each number sessions'
 * journal rows and activity items from what they read at start, so their commits collide
 * (`UNIQUE constraint failed`) and requests one of them acknowledged are refused or lost, as two
 * `npm start` in one folder showed, and as a rolling restart that starts the new process before
 * the old one stops would.
 *
 * The claim is SQLite's own file lock, on a small database of its own: a connection in exclusive
 * locking mode that has written keeps its lock until it closes, and the operating system drops it
 * when the process ends however it ends (a kill -9 leaves no stale claim). The store's database
 * cannot be opened that way, since the WAL checkpointer reads it from a second connection.
 */
export function claimDataDir(dataDir: string): DataDirClaim {
  const file = resolve(join(dataDir, CLAIM_FILE));
  const db = new DatabaseSync(file);
  try {
    // No waiting: a held claim is held for the life of the other process.
    db.exec('PRAGMA busy_timeout = 0');
    db.exec('PRAGMA locking_mode = EXCLUSIVE');
    // Its content does not matter, so no rollback journal to leave beside it.
    db.exec('PRAGMA journal_mode = OFF');
    db.exec('BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS claim (holder INTEGER); COMMIT');
  } catch (error) {
    db.close();
    if (error instanceof Error && /locked|busy/i.test(error.message)) {
      throw new DataDirInUseError(
        `DATA_DIR ${resolve(dataDir)} is in use by another process of this service (it holds ${file}); stop it first, or give this process a DATA_DIR of its own`,
      );
    }
    throw error;
  }
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      db.close();
    },
  };
}
