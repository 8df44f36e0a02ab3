/**
 * Standard Webhooks signing (https://www.standardwebhooks.com, docs/reference/webhooks.md): the signature is
 * `v1,` and the base64 HMAC-SHA256, keyed with the secret's bytes, of `{id}.{timestamp}.{body}`.
 * With two secrets (a rotation) the header carries both signatures, space-separated, and a
 * receiver accepts the message when one matches. Checked against the `standardwebhooks` package
 * in test/integrations/webhook-signature.test.ts.
 */
import { createHmac } from 'node:crypto';

const PREFIX = 'whsec_';

/** The key a `whsec_` secret stands for. */
export const secretKey = (secret: string): Buffer =>
  Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');

/** One `v1,<base64>` signature of the message. */
export function signature(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', secretKey(secret)).update(`${messageId}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** The `webhook-*` headers of one attempt, signed with every secret given. */
export function webhookHeaders(
  secrets: readonly string[],
  messageId: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((secret) => signature(secret, messageId, timestampSeconds, body)).join(' '),
  };
}
