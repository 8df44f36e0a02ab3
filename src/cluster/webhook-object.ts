/**
 * Cluster mode's webhook outbox (docs/reference/webhooks.md, docs/decisions/0036-calls-in-cluster-mode.md):
 * each delivery (one message to one address) is a Restate virtual object keyed by its id. It is
 * created by a one-way call journaled in the invocation that made the change, so it exists exactly
 * when the change does; each attempt is journaled, and the next one is a delayed call to itself.
 */
import * as restate from '@restatedev/restate-sdk';
import type { DeliveryStatus, WebhookMessage, WebhookType } from '../domain/webhook-message.js';
import { WEBHOOK_RETRY_WINDOW_MS, retryDelayMs } from '../domain/webhook-message.js';
import { isoTime } from '../integrations/clock.js';
import type { WebhookSender } from '../integrations/webhook-sender.js';
import type { Delivery } from '../store/call-book.js';

export const WEBHOOK_OBJECT = 'KycWebhook';
export const DELIVERY_STATE = 'delivery';

/** A delivery as its object keeps it: with the session it concerns, so an erasure finds it. */
export type KeptDelivery = Delivery & { session_id: string | null };

/** A message a change queued, before it has its deliveries. */
export interface QueuedMessage {
  type: WebhookType;
  data: Record<string, unknown>;
  sessionId: string | null;
  at: number;
}

/** The largest delivery id: they are random, and `DeliveryParams` reads up to 15 digits. */
const MAX_DELIVERY_ID = 999_999_999_999_999;

/**
 * One delivery per WEBHOOK_URL for `message`, each created by a one-way call journaled in the
 * caller's invocation: the deliveries exist if and only if that invocation's change does. Ids and
 * the message id come from the invocation's seeded random source, so a replay makes the same ones.
 */
export function sendMessage(ctx: restate.Context, urls: readonly string[], message: QueuedMessage): void {
  if (urls.length === 0) return;
  const body: WebhookMessage = { type: message.type, timestamp: isoTime(message.at), data: message.data };
  const payload = JSON.stringify(body);
  const messageId = `msg_${ctx.rand.uuidv4().replaceAll('-', '')}`;
  for (const url of urls) {
    const id = 1 + Math.floor(ctx.rand.random() * MAX_DELIVERY_ID);
    const delivery: KeptDelivery = {
      id,
      message_id: messageId,
      type: message.type,
      url,
      payload,
      created_at: message.at,
      status: 'pending',
      attempts: 0,
      next_at: message.at,
      last_attempt_at: null,
      last_status: null,
      last_error: null,
      session_id: message.sessionId,
    };
    ctx.genericSend({
      service: WEBHOOK_OBJECT,
      method: 'create',
      key: String(id),
      parameter: delivery,
      inputSerde: restate.serde.json,
    });
  }
}

export interface WebhookObjectDeps {
  send: WebhookSender;
}

/** An attempt's network call is not retried by Restate: a failed attempt is an outcome, backed off here. */
const ATTEMPT_RUN = { maxRetryAttempts: 1 };

export function webhookObject(deps: WebhookObjectDeps) {
  /** Attempts the delivery now and keeps what came of it; on a failure, the next attempt is a delayed call. */
  const attempt = async (ctx: restate.ObjectContext, delivery: KeptDelivery): Promise<void> => {
    const at = await ctx.date.now();
    const result = await ctx.run(
      'attempt',
      () => deps.send({ url: delivery.url, messageId: delivery.message_id, body: delivery.payload, at }),
      ATTEMPT_RUN,
    );
    const done = await ctx.date.now();
    const attempts = delivery.attempts + 1;
    if (result.ok) {
      const delivered = { status: 'delivered', next_at: null, last_status: result.status, last_error: null } as const;
      ctx.set(DELIVERY_STATE, { ...delivery, ...delivered, attempts, last_attempt_at: done } satisfies KeptDelivery);
      return;
    }
    const next = done + retryDelayMs(attempts, ctx.rand.random());
    const giveUp = next - delivery.created_at > WEBHOOK_RETRY_WINDOW_MS;
    const status: DeliveryStatus = giveUp ? 'failed' : 'pending';
    ctx.set(DELIVERY_STATE, {
      ...delivery,
      status,
      attempts,
      next_at: giveUp ? null : next,
      last_attempt_at: done,
      last_status: result.status,
      last_error: result.error.slice(0, 300),
    } satisfies KeptDelivery);
    if (!giveUp) schedule(ctx, next, next - done);
  };

  return restate.object({
    name: WEBHOOK_OBJECT,
    handlers: {
      create: restate.handlers.object.exclusive(
        { ingressPrivate: true },
        async (ctx: restate.ObjectContext, delivery: KeptDelivery): Promise<void> => {
          if (await ctx.get(DELIVERY_STATE)) return;
          ctx.set(DELIVERY_STATE, delivery);
          await attempt(ctx, delivery);
        },
      ),
      // A delayed call for the attempt due at `due`: one no longer due (delivered, retried since, erased) does nothing.
      attempt: restate.handlers.object.exclusive(
        { ingressPrivate: true },
        async (ctx: restate.ObjectContext, due: number): Promise<void> => {
          const delivery = await ctx.get<KeptDelivery>(DELIVERY_STATE);
          if (delivery?.status !== 'pending' || delivery.next_at !== due) return;
          await attempt(ctx, delivery);
        },
      ),
      // POST /api/webhooks/deliveries/{id}/retry: pending again and due now, its attempts kept; sent by the call it schedules.
      retry: restate.handlers.object.exclusive(async (ctx: restate.ObjectContext): Promise<KeptDelivery | null> => {
        const delivery = await ctx.get<KeptDelivery>(DELIVERY_STATE);
        if (!delivery) return null;
        const now = await ctx.date.now();
        const again: KeptDelivery = { ...delivery, status: 'pending', next_at: now };
        ctx.set(DELIVERY_STATE, again);
        schedule(ctx, now, 0);
        return again;
      }),
      erase: restate.handlers.object.exclusive(
        { ingressPrivate: true },
        async (ctx: restate.ObjectContext): Promise<boolean> => {
          const held = (await ctx.get(DELIVERY_STATE)) !== null;
          ctx.clearAll();
          return held;
        },
      ),
    },
  });
}

function schedule(ctx: restate.ObjectContext, due: number, delayMs: number): void {
  ctx.genericSend({
    service: WEBHOOK_OBJECT,
    method: 'attempt',
    key: ctx.key,
    parameter: due,
    inputSerde: restate.serde.json,
    delay: Math.max(0, delayMs),
  });
}

export type WebhookObject = ReturnType<typeof webhookObject>;
