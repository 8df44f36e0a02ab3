/**
 * Sends one webhook attempt: a POST of the message's JSON with its Standard Webhooks headers
 * (webhook-signature.ts). Any 2xx is delivered; anything else, or no answer within the timeout, is
 * a failed attempt the outbox tries again (docs/reference/webhooks.md).
 */
import { webhookHeaders } from './webhook-signature.js';

export interface WebhookAttempt {
  url: string;
  messageId: string;
  body: string;
  /** The attempt's time, epoch ms: the signed timestamp. */
  at: number;
}

export type AttemptResult = { ok: true; status: number } | { ok: false; status: number | null; error: string };

export type WebhookSender = (attempt: WebhookAttempt) => Promise<AttemptResult>;

const ATTEMPT_TIMEOUT_MS = 10_000;

export function httpWebhookSender(secrets: readonly string[], timeoutMs = ATTEMPT_TIMEOUT_MS): WebhookSender {
  return async ({ url, messageId, body, at }) => {
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'kyc-voice-assistant-webhooks',
      ...webhookHeaders(secrets, messageId, Math.floor(at / 1000), body),
    };
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'manual',
      });
      // The body is not read: only the status counts, and an endless one must not hold the connection.
      await response.body?.cancel();
      if (response.status >= 200 && response.status < 300) return { ok: true, status: response.status };
      return { ok: false, status: response.status, error: `answered ${response.status}` };
    } catch (error) {
      const cause =
        error instanceof Error ? ((error.cause as { code?: string } | undefined)?.code ?? error.name) : 'error';
      return { ok: false, status: null, error: `not delivered: ${cause}` };
    }
  };
}
