/**
 * What the calls need done in the background, on the injected clock: deliver the webhook outbox
 * (each delivery tried, on a failure tried again with exponential backoff and jitter, kept as
 * failed after 24 hours: docs/reference/webhooks.md) and remove the calls past TRANSCRIPT_RETENTION_DAYS
 * (docs/explanation/calls.md). One timer, due at the earliest of the two; the outbox is in the store, so what
 * was not delivered before a restart is delivered after it.
 */
import type { Logger } from 'pino';
import { WEBHOOK_RETRY_WINDOW_MS, retryDelayMs } from '../domain/webhook-message.js';
import type { AppClock } from '../integrations/clock.js';
import type { Summarizer } from '../integrations/summary-model.js';
import type { WebhookSender } from '../integrations/webhook-sender.js';
import type { CallBook, Delivery } from '../store/call-book.js';

/** The longest delay Node's setTimeout keeps (2^31-1 ms). */
const MAX_TIMER_MS = 2_147_483_647;

export interface CallUpkeepOptions {
  calls: CallBook;
  clock: AppClock;
  logger: Logger;
  send: WebhookSender;
  /** 0 keeps calls for ever. */
  retentionDays: number;
  /** CALL_SUMMARY_MODEL_*: writes each ended call's summary before its call.ended is sent. */
  summarize?: Summarizer | undefined;
  /** [0, 1): the jitter of each retry; tests fix it. */
  random?: () => number;
}

const DAY_MS = 86_400_000;
/** Deliveries sent at once; the rest wait for the next round. */
const BATCH = 16;

export class CallUpkeep {
  private timer: unknown;
  private dueAt = Number.POSITIVE_INFINITY;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(private readonly options: CallUpkeepOptions) {}

  /** Begins: what the outbox holds from before is due now. */
  start(): void {
    this.nudge();
  }

  /** Something may have been queued (a committed call end, consent, erasure), or a call ended and will expire: look now. */
  nudge(): void {
    if (this.stopped) return;
    void this.round().catch((error: unknown) => this.options.logger.error({ err: error }, 'call upkeep failed'));
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.options.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** One round: retention, then every delivery due; resolves when their attempts are recorded. */
  round(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.work().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.nudge();
      } else this.scheduleNext();
    });
    return this.running;
  }

  private async work(): Promise<void> {
    const { calls, clock } = this.options;
    const now = clock.now();
    // Ended calls whose window closed: their outcome stands, and nothing needs to watch for them.
    calls.closeResolveWindows(now);
    if (this.options.retentionDays > 0) {
      const removed = calls.pruneEndedBefore(now - this.retentionMs);
      if (removed > 0) this.options.logger.info({ calls: removed }, 'calls past TRANSCRIPT_RETENTION_DAYS removed');
    }
    const { summarize } = this.options;
    // Each ended call's summary once, from the record's facts and the masked transcript; no
    // answer leaves the record's, and either way its held call.ended becomes due.
    for (
      let waiting = summarize ? calls.pendingSummaries(BATCH) : [];
      waiting.length > 0 && summarize && !this.stopped;
      waiting = calls.pendingSummaries(BATCH)
    ) {
      for (const call of waiting) {
        const summary = await summarize({
          facts: call.report?.summary ?? '',
          transcript: call.transcript.map(({ role, text }) => ({ role, text })),
        });
        if (this.stopped) return;
        calls.summarized(call.call_id, summary, clock.now());
      }
    }
    for (let due = calls.due(now, BATCH); due.length > 0 && !this.stopped; due = calls.due(clock.now(), BATCH)) {
      await Promise.all(due.map((delivery) => this.attempt(delivery)));
    }
  }

  private async attempt(delivery: Delivery): Promise<void> {
    const { calls, clock } = this.options;
    const at = clock.now();
    const result = await this.options.send({
      url: delivery.url,
      messageId: delivery.message_id,
      body: delivery.payload,
      at,
    });
    // An erasure may have removed it while it was on its way.
    if (this.stopped || !calls.delivery(delivery.id)) return;
    const done = clock.now();
    if (result.ok) {
      calls.delivered(delivery.id, done, result.status);
      return;
    }
    const next = done + retryDelayMs(delivery.attempts + 1, (this.options.random ?? Math.random)());
    const giveUp = next - delivery.created_at > WEBHOOK_RETRY_WINDOW_MS;
    calls.attemptFailed(delivery.id, done, result.status, result.error, giveUp ? null : next);
    if (giveUp)
      this.options.logger.warn(
        { delivery: delivery.id, type: delivery.type, attempts: delivery.attempts + 1 },
        'webhook not delivered within 24 hours; kept as failed',
      );
  }

  private get retentionMs(): number {
    return this.options.retentionDays * DAY_MS;
  }

  /**
   * Due at the next delivery or when the oldest ended call expires, whichever is first: no timer
   * runs while there is nothing to do. A call ending later expires later, so the oldest decides.
   */
  private scheduleNext(): void {
    const { calls } = this.options;
    const oldest = this.options.retentionDays > 0 ? calls.oldestEnded() : undefined;
    const at = Math.min(
      calls.nextDue() ?? Number.POSITIVE_INFINITY,
      oldest === undefined ? Number.POSITIVE_INFINITY : oldest + this.retentionMs + 1,
    );
    if (Number.isFinite(at)) this.schedule(at);
  }

  private schedule(at: number): void {
    if (this.stopped || (this.timer !== undefined && at >= this.dueAt)) return;
    if (this.timer !== undefined) this.options.clock.clearTimeout(this.timer);
    this.dueAt = at;
    this.timer = this.options.clock.setTimeout(
      () => {
        this.timer = undefined;
        this.dueAt = Number.POSITIVE_INFINITY;
        this.nudge();
      },
      // Node's timers hold at most 2^31-1 ms (24.8 days) and fire at once past it: a retention of
      // 30 days made this a timer of 1 ms, run again and again. A wake before the due time finds
      // nothing due and arms the next one.
      Math.min(MAX_TIMER_MS, Math.max(0, at - this.options.clock.now())),
    );
  }
}
