import { z } from 'zod';
import { SessionId } from '../domain/sdk-event.js';
import type { SessionKeys } from '../domain/session-key.js';
import { HttpError } from './http-error.js';
import { parseOr422 } from './validate.js';

const SessionParams = z.object({ session_id: SessionId });

/** The session a path's `:session_id` names, keyed as every route keys it, or 422 naming the path. */
export const pathSessionKey = (keys: SessionKeys, params: unknown): string =>
  keys.routingKey(parseOr422(SessionParams, params, 'path').session_id);

/** The session a request addresses (legacy `unknown` kept per user), or 422 naming the field. */
export function sessionKeyOr422(keys: SessionKeys, sessionId: string, userId: string | null | undefined): string {
  const resolved = keys.sessionKeyFor(sessionId, userId);
  if (!resolved.ok) throw new HttpError(422, resolved.detail);
  return resolved.key;
}
