import { acceptableId } from '../domain/trace.js';
import { isIdentifier } from '../privacy/identifier.js';
import { maskWhole } from '../privacy/mask.js';

/**
 * An id a client sends in a header or a query (X-Request-ID, X-Client-ID, X-SVC-SDK-Version,
 * `client_id`): kept only when it reads as an id, and shown as sent only when it is an
 * identifier (docs/explanation/privacy.md, "What is kept"); any other is kept as its digest where one is
 * given (a request id), else masked whole, since it is stored, streamed and echoed.
 */
export function clientSentId(value: string | undefined, idDigest?: (id: string) => string): string | undefined {
  const id = acceptableId(value);
  if (id === undefined || isIdentifier(id)) return id;
  return idDigest === undefined ? maskWhole(id) : idDigest(id);
}
