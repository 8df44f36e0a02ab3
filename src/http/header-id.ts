import { acceptableId } from '../domain/trace.js';
import { isIdentifier } from '../privacy/identifier.js';
import { maskWhole } from '../privacy/mask.js';

/**
 * An id a client sends in a header or a query (X-Request-ID, X-Client-ID, X-SVC-SDK-Version,
 * `client_id`): kept only when it reads as an id, and shown as sent only when it is an
 * identifier (docs/privacy.md, "What is kept"); any other is masked whole, since it is stored,
 * streamed and echoed.
 */
export function clientSentId(value: string | undefined): string | undefined {
  const id = acceptableId(value);
  return id === undefined || isIdentifier(id) ? id : maskWhole(id);
}
