import { createHmac } from 'node:crypto';
import { SESSION_ID_PATTERN } from './sdk-event.js';
import { isIdentifier } from '../privacy/identifier.js';

/**
 * Old SDKs send `session_id: "unknown"` for every user. Shared, those would be one session whose
 * user flips to whoever wrote last, so such traffic is kept per user: `unknown:{user_id}`.
 */
export const LEGACY_UNKNOWN_SESSION = 'unknown';

export type SessionKey = { ok: true; key: string } | { ok: false; detail: string };

/**
 * The keys a process gives sessions. The session key names rooms, activity items and log lines,
 * so it must not carry an identity value: a session id that reads as one, or a legacy user id
 * that does, is keyed by its digest, `h-<24 hex>`. The digest is keyed by `secret`, because the ids
 * it hides are few enough to try them all: every mobile number is about 4 billion SHA-256s, an
 * hour on one core. One secret per process, from ID_DIGEST_SECRET or the store's own
 * (store/id-digest-secret.ts), handed in at start like every other dependency.
 */
export interface SessionKeys {
  /**
   * A session id as the service keys it. SDKs generate opaque ids, but one that reads as an
   * identity value (a phone number or an account number used as the id, a PAN) would name rooms,
   * URLs, activity items and log lines: an id that is not an identifier (privacy/identifier.ts:
   * a UUID, ULID, hex id, or a token with no run of six digits and no document's shape) is keyed
   * by its digest, the same wherever it arrives (a body, a path, a query, a frame), so every call
   * still finds the session.
   */
  routingKey(sessionId: string): string;
  /** The key of the session a call addresses: its routing key, or `unknown:{user}` for legacy SDKs. */
  sessionKeyFor(sessionId: string, userId: string | null | undefined): SessionKey;
  /** Any other id that is no identifier, as the service keeps it: the same digest (privacy/rules.ts, `idDigest`). */
  idDigest: (id: string) => string;
}

export function sessionKeys(secret: string | Buffer): SessionKeys {
  const key = Buffer.from(secret);
  const hmacHex = (value: string): string => createHmac('sha256', key).update(value).digest('hex').slice(0, 24);
  /**
   * A digest must read as an identifier itself, or the key would be digested again where it
   * arrives (a path, a query) and name another session. About one in twenty has ten decimal
   * digits in a row, which the privacy rule reads as a number: that one is hashed again, the same
   * way every time, until it reads as an id.
   */
  const digestOf = (value: string): string => {
    let digest = `h-${hmacHex(value)}`;
    while (!isIdentifier(digest)) digest = `h-${hmacHex(digest)}`;
    return digest;
  };

  /**
   * A legacy user id is kept as it is when the read routes could take it back in a session id
   * (1-128 of `A-Za-z0-9._:-`) and it is no identity value (some apps use the phone number as the
   * user id); else it is keyed by its digest.
   */
  const legacyUserPart = (userId: string): string =>
    SESSION_ID_PATTERN.test(`${LEGACY_UNKNOWN_SESSION}:${userId}`) && isIdentifier(userId) ? userId : digestOf(userId);

  const routingKey = (sessionId: string): string => (isIdentifier(sessionId) ? sessionId : digestOf(sessionId));

  return {
    routingKey,
    idDigest: digestOf,
    sessionKeyFor(sessionId, userId) {
      if (sessionId.toLowerCase() !== LEGACY_UNKNOWN_SESSION) return { ok: true, key: routingKey(sessionId) };
      if (!userId || userId.trim() === '')
        return { ok: false, detail: 'user_id: is required when session_id is "unknown"' };
      return { ok: true, key: `${LEGACY_UNKNOWN_SESSION}:${legacyUserPart(userId)}` };
    },
  };
}
