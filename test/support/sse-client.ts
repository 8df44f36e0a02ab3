import type { EventSourceMessage } from 'eventsource-parser';
import { createParser } from 'eventsource-parser';

export interface ActivityMessageItem {
  id: string;
  kind: string;
  session_id: string;
  user_id: string | null;
  timestamp: string;
  payload: Record<string, unknown>;
  trace: { trace_id: string; request_id: string };
}

/**
 * A stream reader as a client would write one: fetch, then eventsource-parser over the body.
 * Everything parsed is kept in order; `until` waits for a condition on it.
 */
export class SseTestClient {
  readonly messages: EventSourceMessage[] = [];
  readonly comments: string[] = [];
  retry: number | undefined;
  /** Resolves when the body ends: `end` for a clean end, `error` when the connection broke. */
  readonly finished: Promise<'end' | 'error'>;
  private readonly waiters = new Set<() => void>();
  /** `items` parsed so far, and how many of `messages` they cover: `until` reads `items` after each line. */
  private readonly parsedItems: ActivityMessageItem[] = [];
  private parsedUpTo = 0;

  private constructor(
    readonly response: Response,
    private readonly abort: AbortController,
  ) {
    const parser = createParser({
      onEvent: (message) => this.changed(() => this.messages.push(message)),
      onComment: (comment) => this.changed(() => this.comments.push(comment.trim())),
      onRetry: (retry) => this.changed(() => (this.retry = retry)),
    });
    this.finished = this.read(parser);
  }

  static async open(url: string, headers: Record<string, string> = {}): Promise<SseTestClient> {
    const abort = new AbortController();
    // Connection: close, so fetch keeps no connection of a stream in its pool once the stream ends.
    // With pooling, a test after a restart now and then hung on Node 22 (1 run in 10 to 20 of
    // test/durability and test/http) with a connection that sent nothing open on a server of the
    // next test, whose close (supertest waits for it) likely waited on it; with this, 0 hangs in 32 runs.
    const response = await fetch(url, {
      headers: { accept: 'text/event-stream', connection: 'close', ...headers },
      signal: abort.signal,
    });
    return new SseTestClient(response, abort);
  }

  /** `activity` messages' items, in arrival order. */
  get items(): ActivityMessageItem[] {
    // Parsed once each: a condition waiting for the n-th item read every earlier one again on each line.
    for (; this.parsedUpTo < this.messages.length; this.parsedUpTo += 1) {
      const message = this.messages[this.parsedUpTo]!;
      if (message.event === 'activity') this.parsedItems.push(JSON.parse(message.data) as ActivityMessageItem);
    }
    return this.parsedItems.slice();
  }

  get ids(): string[] {
    return this.items.map((item) => item.id);
  }

  /** Resolves once `condition` holds (checked after each parsed line), or fails after `timeoutMs`. */
  until(condition: (client: this) => boolean, timeoutMs = 5000): Promise<void> {
    if (condition(this)) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`stream condition not met in ${timeoutMs} ms; got ${this.messages.length} messages`));
      }, timeoutMs);
      const check = () => {
        if (!condition(this)) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      this.waiters.add(check);
    });
  }

  close(): void {
    this.abort.abort();
  }

  private changed(apply: () => void): void {
    apply();
    for (const waiter of [...this.waiters]) waiter();
  }

  private async read(parser: ReturnType<typeof createParser>): Promise<'end' | 'error'> {
    if (!this.response.body) return 'end';
    const decoder = new TextDecoder();
    try {
      for await (const chunk of this.response.body) parser.feed(decoder.decode(chunk, { stream: true }));
      return 'end';
    } catch {
      return 'error';
    } finally {
      this.changed(() => undefined);
    }
  }
}
