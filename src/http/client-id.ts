import type { Request } from 'express';
import { clientSentId } from './header-id.js';
import { HttpError } from './http-error.js';

export const CLIENT_ID_FORM = 'X-Client-ID: must be 1-128 characters of A-Za-z0-9._:@/+=-';

/**
 * The tenant an X-Client-ID header value names, if the header was sent. It selects configuration,
 * so a value that is not a plain id, an empty one included, is refused rather than silently treated
 * as absent; one holding an identity value is masked (`clientSentId`), as it is kept in activity
 * items and echoed (no tenant is named like one).
 */
export function clientIdFromHeader(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const clientId = clientSentId(raw.trim());
  if (!clientId) throw new HttpError(422, CLIENT_ID_FORM);
  return clientId;
}

/** The tenant named by the request's X-Client-ID, if any (422 for one that is not a plain id). */
export function clientIdHeader(req: Request): string | undefined {
  return clientIdFromHeader(req.get('x-client-id'));
}

/**
 * The tenant of a config request: X-Client-ID, else the `client_id` query the SDK may add. Both
 * are checked when both are sent, so a bad query is refused even where the header wins.
 */
export function clientIdOf(req: Request): string | undefined {
  const header = clientIdHeader(req);
  const query = req.query.client_id;
  if (query === undefined) return header;
  const clientId = typeof query === 'string' ? clientSentId(query.trim()) : undefined;
  if (!clientId) throw new HttpError(422, 'client_id: must be 1-128 characters of A-Za-z0-9._:@/+=-');
  return header ?? clientId;
}
