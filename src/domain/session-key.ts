/**
 * Old SDKs send `session_id: "unknown"` for every user. Shared, those would be one session whose
 * user flips to whoever wrote last, so such traffic is kept per user: `unknown:{user_id}`.
 */
export const LEGACY_UNKNOWN_SESSION = 'unknown';

export type SessionKey = { ok: true; key: string } | { ok: false; detail: string };

export function sessionKeyFor(sessionId: string, userId: string | null | undefined): SessionKey {
  if (sessionId.toLowerCase() !== LEGACY_UNKNOWN_SESSION) return { ok: true, key: sessionId };
  if (!userId || userId.trim() === '') return { ok: false, detail: 'user_id: is required when session_id is "unknown"' };
  return { ok: true, key: `${LEGACY_UNKNOWN_SESSION}:${userId}` };
}
