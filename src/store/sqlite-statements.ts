/**
 * The SQLite store's prepared statements, made once when the store opens, and the arithmetic of
 * the activity index's spans they rely on.
 */
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { ACTIVITY_SPAN_BITS } from './migrations.js';

export type SqliteStatements = ReturnType<typeof prepare>;

export type ItemRow = { id: number; item: string };

export function prepare(db: DatabaseSync) {
  const items = (where: string) => db.prepare(`SELECT id, item FROM activity ${where} ORDER BY id DESC LIMIT ?`);
  return {
    loadSession: db.prepare('SELECT * FROM sessions WHERE session_id = ?'),
    holdsSession: db.prepare('SELECT 1 AS held FROM sessions WHERE session_id = ?'),
    loadFields: db.prepare('SELECT field, value FROM session_fields WHERE session_id = ?'),
    countSessions: db.prepare('SELECT count(*) AS n FROM sessions'),
    dueSessions: db.prepare('SELECT session_id FROM sessions WHERE wake_at <= ? ORDER BY wake_at'),
    nextWake: db.prepare('SELECT min(wake_at) AS at FROM sessions WHERE wake_at > ?'),
    leastRecent: db.prepare('SELECT session_id FROM sessions ORDER BY last_activity_at'),
    newest: items(''),
    newestBySession: items(`WHERE (id >> ${ACTIVITY_SPAN_BITS}) = ? AND session_id = ?`),
    newestByKind: items('WHERE kind = ?'),
    newestBySessionKind: items(`WHERE (id >> ${ACTIVITY_SPAN_BITS}) = ? AND session_id = ? AND kind = ?`),
    after: db.prepare('SELECT id, item FROM activity WHERE id > ? ORDER BY id LIMIT ?'),
    oldestId: db.prepare('SELECT min(id) AS id FROM activity'),
    newestTime: db.prepare('SELECT at FROM activity ORDER BY id DESC LIMIT 1'),
    keepReply: db.prepare(
      'INSERT OR REPLACE INTO kept_replies (request_key, fingerprint, reply, at) VALUES (?, ?, ?, ?)',
    ),
    keptReply: db.prepare('SELECT fingerprint, reply FROM kept_replies WHERE request_key = ? AND at >= ?'),
    pruneRepliesOlder: db.prepare('DELETE FROM kept_replies WHERE at < ?'),
    pruneRepliesOver: db.prepare(
      'DELETE FROM kept_replies WHERE at < (SELECT at FROM kept_replies ORDER BY at DESC LIMIT 1 OFFSET ?)',
    ),
    lastId: db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'activity'"),
    pruneBefore: db.prepare('DELETE FROM activity WHERE id < ?'),
    // Ids follow time: the oldest by age are the lowest ids, so the lowest are looked at (no index
    // on the time to keep up to date per item) and what is left stays contiguous.
    pruneOlder: db.prepare('DELETE FROM activity WHERE id IN (SELECT id FROM activity ORDER BY id LIMIT ?) AND at < ?'),
  } satisfies Record<string, StatementSync>;
}

/** The span of 2^ACTIVITY_SPAN_BITS ids an activity id is in (ids stay below 2^53, so no 32-bit shift). */
export const spanOf = (id: number): number => Math.floor(id / 2 ** ACTIVITY_SPAN_BITS);
