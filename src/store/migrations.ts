import type { DatabaseSync } from 'node:sqlite';

/**
 * The schema, one step per version; `PRAGMA user_version` records the steps applied. A step is
 * never edited once released: a change is a new step.
 */
export const MIGRATIONS: readonly string[] = [
  // 1: sessions as JSON with the columns the listing filters on, and the activity log.
  `
  CREATE TABLE sessions (
    session_id TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    wake_at INTEGER,
    user_id TEXT,
    screen TEXT,
    voice TEXT NOT NULL,
    cooldown_until INTEGER,
    created_at INTEGER NOT NULL,
    last_activity_at INTEGER NOT NULL
  );
  CREATE INDEX sessions_wake ON sessions (wake_at) WHERE wake_at IS NOT NULL;
  CREATE INDEX sessions_recent ON sessions (last_activity_at);
  CREATE INDEX sessions_voice ON sessions (voice, session_id);
  CREATE INDEX sessions_screen ON sessions (screen, session_id);
  CREATE TABLE activity (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    at INTEGER NOT NULL,
    session_id TEXT,
    item TEXT NOT NULL
  );
  CREATE INDEX activity_session ON activity (session_id, id);
  CREATE INDEX activity_kind ON activity (kind, id);
  `,
  // 2: the write-ahead journal a group commit appends to (sqlite-journal.ts): no secondary index,
  // so a commit moves no index entry; a session row without state is a removal.
  `
  CREATE TABLE session_journal (
    seq INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    state TEXT,
    wake_at INTEGER,
    user_id TEXT,
    screen TEXT,
    voice TEXT,
    cooldown_until INTEGER,
    created_at INTEGER,
    last_activity_at INTEGER
  );
  CREATE TABLE activity_journal (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    at INTEGER NOT NULL,
    session_id TEXT,
    item TEXT NOT NULL
  );
  `,
  // 3: a session's schemas and each component hint kept beside its state, written only when they
  // change (session-fields.ts): journaled in `field_journal`, applied to `session_fields`. A
  // session from before has none: its `state` still holds them.
  `
  CREATE TABLE field_journal (
    id INTEGER PRIMARY KEY,
    seq INTEGER NOT NULL,
    session_id TEXT NOT NULL,
    field TEXT NOT NULL,
    value TEXT NOT NULL
  );
  CREATE TABLE session_fields (
    session_id TEXT NOT NULL,
    field TEXT NOT NULL,
    value TEXT NOT NULL,
    UNIQUE (session_id, field)
  );
  `,
  // 4: a session's items found by their id's span of 65,536 (ACTIVITY_SPAN_BITS) first, then the
  // session: a journal apply's entries then all go into the newest span's part of the index,
  // where keyed by session first they went to a page per session across the whole log
  // (docs/decisions/0011-group-commit-and-the-journal.md).
  `
  DROP INDEX activity_session;
  CREATE INDEX activity_span_session ON activity ((id >> 16), session_id, id);
  `,
  // 5: the answers of requests a client named (Idempotency-Key, X-Request-ID), each written in the
  // commit of the change it answers, for a copy sent after a restart (kept-replies.ts).
  `
  CREATE TABLE kept_replies (
    request_key TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    reply TEXT NOT NULL,
    at INTEGER NOT NULL
  );
  CREATE INDEX kept_replies_at ON kept_replies (at);
  `,
  // 6: calls, their transcripts and reports, the consent record, the webhook outbox and the
  // record of erasures (call-book.ts, docs/explanation/calls.md). The consent record is append-only: a
  // trigger refuses any update; rows leave it only by erasure.
  `
  CREATE TABLE calls (
    call_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    user_id TEXT,
    started_at INTEGER NOT NULL,
    ended_at INTEGER,
    record TEXT NOT NULL,
    summary_pending INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX calls_session ON calls (session_id, started_at);
  CREATE INDEX calls_user ON calls (user_id) WHERE user_id IS NOT NULL;
  CREATE INDEX calls_ended ON calls (ended_at) WHERE ended_at IS NOT NULL;
  CREATE TABLE call_turns (
    id INTEGER PRIMARY KEY,
    call_id TEXT NOT NULL,
    role TEXT NOT NULL,
    channel TEXT NOT NULL,
    text TEXT NOT NULL,
    at INTEGER NOT NULL,
    screen TEXT
  );
  CREATE INDEX call_turns_call ON call_turns (call_id, id);
  CREATE TABLE consents (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    user_id TEXT,
    decision TEXT NOT NULL,
    notice_version TEXT NOT NULL,
    language TEXT NOT NULL,
    at INTEGER NOT NULL
  );
  CREATE INDEX consents_session ON consents (session_id, id);
  CREATE INDEX consents_user ON consents (user_id) WHERE user_id IS NOT NULL;
  CREATE TRIGGER consents_append_only BEFORE UPDATE ON consents BEGIN SELECT RAISE(ABORT, 'the consent record is append-only'); END;
  CREATE TABLE webhook_outbox (
    id INTEGER PRIMARY KEY,
    message_id TEXT NOT NULL,
    type TEXT NOT NULL,
    url TEXT NOT NULL,
    payload TEXT NOT NULL,
    session_id TEXT,
    call_id TEXT,
    created_at INTEGER NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    next_at INTEGER,
    last_attempt_at INTEGER,
    last_status INTEGER,
    last_error TEXT
  );
  CREATE INDEX webhook_outbox_due ON webhook_outbox (next_at) WHERE status = 'pending';
  CREATE INDEX webhook_outbox_session ON webhook_outbox (session_id) WHERE session_id IS NOT NULL;
  CREATE INDEX webhook_outbox_held ON webhook_outbox (call_id) WHERE status = 'held';
  CREATE INDEX calls_summary_pending ON calls (summary_pending) WHERE summary_pending = 1;
  CREATE TABLE erasures (
    erasure_id TEXT PRIMARY KEY,
    at INTEGER NOT NULL,
    removed TEXT NOT NULL
  );
  `,
  // 7: until when an ended call's outcome may still become resolved, the user moving past its
  // step after it (CALL_RESOLVE_WINDOW_MINUTES, docs/explanation/calls.md); null when it cannot change.
  `
  ALTER TABLE calls ADD COLUMN resolve_until INTEGER;
  CREATE INDEX calls_resolve_until ON calls (resolve_until) WHERE resolve_until IS NOT NULL;
  `,
  // 8: replies kept before no credential was kept with one held a voice start's LiveKit token:
  // dropped (their bytes zeroed: secure_delete), so a copy of such a start runs again
  // (docs/decisions/0033-no-credential-kept-with-a-reply.md).
  `
  DELETE FROM kept_replies WHERE instr(reply, '"token":') > 0;
  `,
];

/**
 * The bits of an activity id the index of step 4 leaves out: a span holds 2^16 consecutive ids.
 * Step 4 writes the 16 itself (a released step is never edited), and the store's queries must
 * use the same expression for SQLite to use the index (test/durability/activity-spans.test.ts).
 */
export const ACTIVITY_SPAN_BITS = 16;

export class SchemaTooNewError extends Error {
  override name = 'SchemaTooNewError';
}

/** Brings the database to the current version, each step in its own transaction. */
export function migrate(db: DatabaseSync): void {
  const { user_version: version } = db.prepare('PRAGMA user_version').get() as { user_version: number };
  if (version > MIGRATIONS.length) {
    throw new SchemaTooNewError(
      `schema version ${version} is newer than this release knows (${MIGRATIONS.length}); run a newer release or restore a backup`,
    );
  }
  for (let step = version; step < MIGRATIONS.length; step += 1) {
    db.exec('BEGIN IMMEDIATE');
    try {
      db.exec(MIGRATIONS[step]!);
      db.exec(`PRAGMA user_version = ${step + 1}`);
      db.exec('COMMIT');
    } catch (error) {
      db.exec('ROLLBACK');
      throw error;
    }
  }
}
