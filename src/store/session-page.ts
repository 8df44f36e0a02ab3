import type { SessionPage, SessionPageQuery, StoredSession } from './ports.js';

/** Whether a session matches the listing filters (the SQL store applies the same in its query). */
export function matchesPage(stored: StoredSession, query: SessionPageQuery): boolean {
  const { summary } = stored;
  if (query.after !== undefined && stored.session_id <= query.after) return false;
  if (query.voice === 'active' && summary.voice === 'inactive') return false;
  if (query.screen !== undefined && summary.screen !== query.screen) return false;
  if (query.q !== undefined && !stored.session_id.startsWith(query.q) && !(summary.user_id ?? '').startsWith(query.q)) return false;
  return true;
}

/** A page of sessions in session_id order, for the memory store. */
export function pageSessions(sessions: Iterable<StoredSession>, query: SessionPageQuery): SessionPage {
  const matching = [...sessions].filter((stored) => matchesPage(stored, query)).sort((a, b) => (a.session_id < b.session_id ? -1 : 1));
  const items = matching.slice(0, query.limit).map((stored) => ({ session_id: stored.session_id, ...stored.summary }));
  return { items, next: matching.length > query.limit ? items.at(-1)!.session_id : null };
}
