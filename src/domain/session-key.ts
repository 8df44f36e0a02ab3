import { createHmac, randomBytes } from 'node:crypto';
import { redactText } from './event-redaction.js';
import { SESSION_ID_PATTERN } from './sdk-event.js';

/**
 * Old SDKs send `session_id: "unknown"` for every user. Shared, those would be one session whose
 * user flips to whoever wrote last, so such traffic is kept per user: `unknown:{user_id}`.
 */
export const LEGACY_UNKNOWN_SESSION = 'unknown';

export type SessionKey = { ok: true; key: string } | { ok: false; detail: string };

/**
 * The session key names rooms, activity items and log lines, so it must not carry an identity
 * value. Some apps use the phone number as the user id: such a user id is keyed by its digest.
 * So is one whose key the read routes could not take back (a session id is 1-128 of
 * `A-Za-z0-9._:-`): a space, a slash, a letter outside ASCII, or too long.
 */
function legacyUserPart(userId: string): string {
  if (SESSION_ID_PATTERN.test(`${LEGACY_UNKNOWN_SESSION}:${userId}`) && redactText(userId) === userId) return userId;
  return digestOf(userId);
}

/**
 * The key of the digests. Keyed, because the ids it hides are few enough to try them all: every
 * mobile number is about 4 billion SHA-256s, an hour on one core. One per process, set at start
 * from ID_DIGEST_SECRET or the store's own (`useIdDigestSecret`); until then a random one, which
 * a process that keeps nothing across restarts (the memory store) never needs to replace.
 */
let digestSecret: Buffer = randomBytes(32);

/** Sets the key; returns the one it replaces (a test puts it back). */
export function useIdDigestSecret(secret: string | Buffer): Buffer {
  const previous = digestSecret;
  digestSecret = Buffer.from(secret);
  return previous;
}

const digestOf = (value: string): string => `h-${createHmac('sha256', digestSecret).update(value).digest('hex').slice(0, 24)}`;

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/**
 * A session id as the service keys it. SDKs generate opaque ids, but one that reads as an
 * identity value (a phone number or an account number used as the id, a PAN) would name rooms,
 * URLs, activity items and log lines: such an id is keyed by its digest, the same wherever it
 * arrives (a body, a path, a query, a frame), so every call still finds the session. A UUID in
 * the id is random, never an identity value, though one of its groups may be twelve digits that
 * read as one: UUIDs are left out of the check.
 */
export function routingKey(sessionId: string): string {
  const checked = sessionId.replace(UUID, '-');
  return redactText(checked) === checked ? sessionId : digestOf(sessionId);
}

export function sessionKeyFor(sessionId: string, userId: string | null | undefined): SessionKey {
  if (sessionId.toLowerCase() !== LEGACY_UNKNOWN_SESSION) return { ok: true, key: routingKey(sessionId) };
  if (!userId || userId.trim() === '') return { ok: false, detail: 'user_id: is required when session_id is "unknown"' };
  return { ok: true, key: `${LEGACY_UNKNOWN_SESSION}:${legacyUserPart(userId)}` };
}
