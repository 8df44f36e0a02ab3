import { Worker } from 'node:worker_threads';

/**
 * Copies the SQLite store's WAL back into its database file on a worker thread, so the main
 * thread's commits do not stop for it.
 *
 * SQLite checkpoints on the connection whose commit takes the WAL past `wal_autocheckpoint`
 * pages, and in this service that is the main thread: 1,000 pages of 16 KiB copied and synced
 * inside a request's commit, which was much of the durable store's p99 (git show d1df1cf:docs/benchmark-history.md, "Ninth
 * round"). Here a second connection, on its own thread, runs a passive checkpoint (it never waits
 * on the writer, and the writer never waits on it) whenever the main thread has committed enough
 * since the last one. Only a writer can start the WAL over once it is all copied, so the main
 * connection keeps a higher `wal_autocheckpoint` as the bound: when it is reached, most frames are
 * already copied and its checkpoint is short, and if this worker stops or falls behind, the WAL
 * still stays bounded and the file correct.
 */
export interface WalCheckpointer {
  /** The main connection committed a transaction. */
  committed(): void;
  /**
   * Closes the worker's connection before the caller closes its own, waiting for it (up to
   * CLOSE_WAIT_MS): the last connection to close copies the whole WAL back and removes it, so a
   * clean stop leaves no WAL to replay, as it did before this worker.
   */
  close(): void;
  /** Stops the worker without waiting, as a crash would (tests of restart). */
  abandon(): void;
  /** The checkpoints this worker has finished, and the last one's outcome (tests). */
  readonly done: { count: number; last: CheckpointOutcome | undefined };
  /** Resolves when the worker finishes its next checkpoint (tests). */
  next(): Promise<CheckpointOutcome>;
}

/** What `PRAGMA wal_checkpoint(PASSIVE)` answered: frames in the WAL and frames now in the file. */
export interface CheckpointOutcome {
  ok: boolean;
  log?: number;
  checkpointed?: number;
  error?: string;
}

/**
 * Commits between two checkpoint requests: each checkpoint syncs the WAL and the file, and each
 * request is a message to the worker and one back, so not after every commit. Rarer checkpoints
 * also copy a page the commits rewrite (a journal table's last page, its parent) once for more
 * commits. Every few commits, the request's postMessage alone showed in the main thread's profile
 * under the ingestion load (docs/decisions/0012-where-a-durable-request-goes.md).
 */
export const COMMITS_PER_CHECKPOINT = 32;
/** How long a close waits for the worker's checkpoint under way (one is at most a few thousand pages). */
const CLOSE_WAIT_MS = 10_000;

/**
 * The worker's code. An eval'd script, not a module file: it runs the same from the built service,
 * under the test runner's loader and on Node 22, which does not strip types in workers.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const closedFlag = new Int32Array(workerData.closed);
const emitWarning = process.emitWarning.bind(process);
// Node 22 calls node:sqlite experimental on every thread that loads it. src/sqlite-warning.ts hides
// it on the main thread; a worker has its own process.emitWarning, so the same filter is set here.
process.emitWarning = (warning, ...rest) => {
  if (String(warning && warning.message ? warning.message : warning).startsWith('SQLite is an experimental feature')) return;
  emitWarning(warning, ...rest);
};
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.file);
db.exec('PRAGMA busy_timeout = 0');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
parentPort.on('message', (message) => {
  if (message === 'close') {
    try {
      db.close();
    } finally {
      Atomics.store(closedFlag, 0, 1);
      Atomics.notify(closedFlag, 0);
      parentPort.close();
    }
    return;
  }
  try {
    const row = checkpoint.get();
    parentPort.postMessage({ ok: true, log: row.log, checkpointed: row.checkpointed });
  } catch (error) {
    parentPort.postMessage({ ok: false, error: String(error && error.message ? error.message : error) });
  }
});
`;

export function startWalCheckpointer(file: string): WalCheckpointer {
  // Started at the first checkpoint, so a store that commits little never runs a thread for it.
  let worker: { thread: Worker; closed: Int32Array } | undefined;
  let inFlight = false;
  let commits = 0;
  let closed = false;
  const waiters: ((outcome: CheckpointOutcome) => void)[] = [];
  const done: WalCheckpointer['done'] = { count: 0, last: undefined };
  const settle = (outcome: CheckpointOutcome) => {
    done.last = outcome;
    for (const resolve of waiters.splice(0)) resolve(outcome);
  };
  const start = () => {
    const closedFlag = new SharedArrayBuffer(4);
    const started = new Worker(WORKER_SOURCE, { eval: true, workerData: { file, closed: closedFlag } });
    // Never what keeps the process alive, nor what takes it down: without it the main connection's bound still holds.
    started.unref();
    started.on('message', (outcome: CheckpointOutcome) => {
      inFlight = false;
      done.count += 1;
      settle(outcome);
      if (!closed && commits >= COMMITS_PER_CHECKPOINT) request();
    });
    started.on('error', (error: Error) => {
      closed = true;
      inFlight = false;
      settle({ ok: false, error: error.message });
    });
    const closedSignal = new Int32Array(closedFlag);
    started.once('exit', () => {
      // A worker that exited holds no connection: nothing to wait for at close.
      Atomics.store(closedSignal, 0, 1);
    });
    return { thread: started, closed: closedSignal };
  };
  const request = () => {
    inFlight = true;
    commits = 0;
    (worker ??= start()).thread.postMessage('checkpoint');
  };
  return {
    done,
    committed() {
      if (closed) return;
      commits += 1;
      if (!inFlight && commits >= COMMITS_PER_CHECKPOINT) request();
    },
    next: () => new Promise((resolve) => waiters.push(resolve)),
    close() {
      closed = true;
      const stopping = worker;
      worker = undefined;
      if (!stopping) return;
      stopping.thread.postMessage('close');
      // Blocks this thread, briefly and only at close: the store's close is synchronous, and its
      // connection must be the last one for the WAL to be copied back and removed.
      Atomics.wait(stopping.closed, 0, 0, CLOSE_WAIT_MS);
    },
    abandon() {
      closed = true;
      const stopping = worker;
      worker = undefined;
      void stopping?.thread.terminate();
    },
  };
}
