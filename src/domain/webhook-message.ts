/**
 * What the service tells a receiver, as Standard Webhooks messages: `{type, timestamp, data}`
 * (docs/reference/webhooks.md). The data holds no transcript text and no identity value beyond what the
 * service keeps masked.
 */
export const WEBHOOK_TYPES = [
  'call.ended',
  'call.outcome_updated',
  'consent.recorded',
  'handoff.requested',
  'handoff.unanswered',
  'user.erased',
] as const;
export type WebhookType = (typeof WEBHOOK_TYPES)[number];

export interface WebhookMessage {
  type: WebhookType;
  /** ISO 8601, the time of the change. */
  timestamp: string;
  data: Record<string, unknown>;
}

/** `held`: a call.ended waiting for its summary from the language model. */
export type DeliveryStatus = 'held' | 'pending' | 'delivered' | 'failed';

/** How long a delivery is retried before it is kept as failed. */
export const WEBHOOK_RETRY_WINDOW_MS = 24 * 3_600_000;
const FIRST_RETRY_MS = 5_000;
const LONGEST_RETRY_MS = 3_600_000;

/**
 * The wait before attempt `attempts + 1`: exponential from 5 s, capped at an hour, with full jitter
 * in its upper half (`random` in [0, 1)) so receivers coming back are not hit all at once.
 */
export function retryDelayMs(attempts: number, random: number): number {
  const ceiling = Math.min(LONGEST_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1));
  return Math.round(ceiling / 2 + (ceiling / 2) * random);
}
