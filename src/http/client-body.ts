import type { z } from 'zod';
import { redactValue } from '../domain/event-redaction.js';
import type { PiiRules } from '../privacy/rules.js';
import { parseOr422 } from './validate.js';

/**
 * A validated request body with identity values masked (docs/decisions/0001-identity-values-masked-on-arrival.md), for every route whose body
 * the service keeps, records or logs. `session_id` stays as sent: it routes the request and names
 * the room, and a key derived from it never holds an identity value (session-key.ts). `sent` is
 * the body before redaction, for the few things that need a raw value once and keep none of it
 * (the legacy session key, a drop-off phone reduced to its last 4 digits).
 */
export function parseClientBody<S extends z.ZodType>(
  schema: S,
  raw: unknown,
  rules: PiiRules,
): { sent: z.output<S>; body: z.output<S> } {
  const sent = parseOr422(schema, raw);
  const redacted = redactValue(sent, rules);
  const sessionId = (sent as { session_id?: unknown }).session_id;
  const body = sessionId === undefined ? redacted : ({ ...(redacted as object), session_id: sessionId } as z.output<S>);
  return { sent, body };
}
