import type { SessionKeys } from '../domain/session-key.js';
import { HttpError } from './http-error.js';

/** The session a request addresses (legacy `unknown` kept per user), or 422 naming the field. */
export function sessionKeyOr422(keys: SessionKeys, sessionId: string, userId: string | null | undefined): string {
  const resolved = keys.sessionKeyFor(sessionId, userId);
  if (!resolved.ok) throw new HttpError(422, resolved.detail);
  return resolved.key;
}
