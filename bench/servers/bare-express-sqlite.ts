/**
 * Baseline for the durable store: bare express 5 with express.json() that keeps each SDK event as
 * one row in SQLite before answering, the least a durable ingest can do. Same engine and settings
 * as STORE=sqlite (node:sqlite, WAL, synchronous NORMAL), and the same group commit: the rows of
 * one event-loop turn go in one transaction, and each request is answered once it is committed.
 * No session, no index, no activity item: what is left of STORE=sqlite's gap to this is the
 * service's own work.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import express from 'express';
import type { Response } from 'express';

const dir = mkdtempSync(join(tmpdir(), 'bare-sqlite-'));
const db = new DatabaseSync(join(dir, 'events.sqlite'));
db.exec('PRAGMA journal_mode = WAL');
db.exec('PRAGMA synchronous = NORMAL');
db.exec('CREATE TABLE events (id INTEGER PRIMARY KEY, session_id TEXT, event TEXT NOT NULL)');
const insert = db.prepare('INSERT INTO events (session_id, event) VALUES (?, ?)');

let queued: { sessionId: string | null; event: string; res: Response }[] = [];
function commit(): void {
  const batch = queued;
  queued = [];
  db.exec('BEGIN');
  for (const row of batch) insert.run(row.sessionId, row.event);
  db.exec('COMMIT');
  const ingestedAt = Math.floor(Date.now() / 1000);
  for (const row of batch) row.res.json({ status: 'ok', ingested_at: ingestedAt });
}

const app = express();
app.use(express.json());
app.post('/v1/events', (req, res) => {
  const body = req.body as { session_id?: unknown };
  queued.push({
    sessionId: typeof body.session_id === 'string' ? body.session_id : null,
    event: JSON.stringify(body),
    res,
  });
  if (queued.length === 1) setImmediate(commit);
});
const server = app.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1');
process.on('SIGTERM', () =>
  server.close(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  }),
);
