import { redactText } from '../domain/event-redaction.js';
import { acceptableId } from '../domain/trace.js';

/**
 * An id a client sends in a header or a query (X-Request-ID, X-Client-ID, X-SVC-SDK-Version,
 * `client_id`): kept only when it reads as an id, and then masked like any client text, since it
 * is stored, streamed and echoed (an identity value, whatever field it is in: docs/decisions/0001-identity-values-masked-on-arrival.md).
 */
export function clientSentId(value: string | undefined): string | undefined {
  const id = acceptableId(value);
  return id === undefined ? undefined : redactText(id);
}
