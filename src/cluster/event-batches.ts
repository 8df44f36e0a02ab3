/**
 * SESSION_HOST=restate: the SDK events this process holds for one session leave it together, as one
 * invocation of the session's object, so Restate journals a batch rather than each event
 * (docs/decisions/0040-events-batched-per-session.md).
 *
 * A session's first event is sent at once: nothing waits for company. Events that arrive while a
 * send for their session is under way wait for it, then leave together in arrival order, so a
 * session's events reach Restate in the order this process took them and the batch grows with the
 * load: the longer Restate takes to acknowledge a send, the more events gather behind it. An event
 * the client named (its idempotency key) travels alone: Restate's key names one invocation, and a
 * retry must find exactly the first copy's.
 */

export interface BatchLimits {
  /** At most this many events in one invocation. */
  maxEvents: number;
  /** At most this many bytes of events in one invocation (one event over it still goes, alone). */
  maxBytes: number;
}

/**
 * The bounds a batch stays within: a 64 KiB event body at most (docs/reference/limits.md) makes 64 events at most
 * 4 MiB of JSON, and 1 MiB keeps one invocation's input well under what Restate takes in one message.
 */
export const DEFAULT_BATCH_LIMITS: BatchLimits = { maxEvents: 64, maxBytes: 1_048_576 };

export interface BatchedEvent<E> {
  event: E;
  /** Its size as sent, counted against `maxBytes`. */
  bytes: number;
  /** The client's name for the request: such an event is sent alone, under this key. */
  key: string | undefined;
}

/**
 * Sends one batch and answers each of its events, in order. It must not throw: a failure is an
 * answer (every event of a batch that was not taken is told so).
 */
export type SendBatch<E, A> = (sessionId: string, events: readonly BatchedEvent<E>[]) => Promise<A[]>;

interface Waiting<E, A> extends BatchedEvent<E> {
  answer: (answer: A) => void;
  fail: (error: unknown) => void;
}

export class SessionBatches<E, A> {
  /** Sessions with a send under way, each with the events waiting for it. */
  private readonly waiting = new Map<string, Waiting<E, A>[]>();
  private readonly sizes = { batches: 0, events: 0 };

  constructor(
    private readonly send: SendBatch<E, A>,
    private readonly limits: BatchLimits = DEFAULT_BATCH_LIMITS,
  ) {}

  /** The event's answer, once the batch it left in is answered. */
  submit(sessionId: string, event: BatchedEvent<E>): Promise<A> {
    return new Promise<A>((answer, fail) => {
      const entry: Waiting<E, A> = { ...event, answer, fail };
      const queue = this.waiting.get(sessionId);
      if (queue) {
        queue.push(entry);
        return;
      }
      this.waiting.set(sessionId, []);
      void this.drain(sessionId, [entry]);
    });
  }

  /** Batches sent and the events they carried, since the process started (what a test reads of how events were grouped). */
  totals(): Readonly<{ batches: number; events: number }> {
    return this.sizes;
  }

  /** Sends `batch`, then whatever gathered for the session meanwhile, until nothing waits. */
  private async drain(sessionId: string, first: Waiting<E, A>[]): Promise<void> {
    let batch = first;
    for (;;) {
      this.sizes.batches += 1;
      this.sizes.events += batch.length;
      try {
        const answers = await this.send(sessionId, batch);
        batch.forEach((entry, index) => entry.answer(answers[index] as A));
      } catch (error) {
        for (const entry of batch) entry.fail(error);
      }
      const queue = this.waiting.get(sessionId) ?? [];
      if (queue.length === 0) {
        this.waiting.delete(sessionId);
        return;
      }
      batch = this.next(queue);
    }
  }

  /** Takes the next batch off the front of `queue`: a named event alone, otherwise unnamed ones up to the limits. */
  private next(queue: Waiting<E, A>[]): Waiting<E, A>[] {
    const head = queue[0]!;
    if (head.key !== undefined) return queue.splice(0, 1);
    let count = 1;
    let bytes = head.bytes;
    while (count < queue.length && count < this.limits.maxEvents) {
      const candidate = queue[count]!;
      if (candidate.key !== undefined || bytes + candidate.bytes > this.limits.maxBytes) break;
      bytes += candidate.bytes;
      count += 1;
    }
    return queue.splice(0, count);
  }
}
