import { performance } from 'node:perf_hooks';

/**
 * How long one turn may spend delivering commands before the rest wait for the next turn. Past
 * MAX_SESSIONS each new session also evicts one, and while V8 marks a heap of several hundred MB
 * every step runs a few times slower: delivering a whole turn's commands at once then held the
 * event loop for over 100 ms, and `/health/live`, a new connection, or a request with nothing to
 * deliver waited that long (docs/decisions/0043-a-turn-of-deliveries-has-a-time-budget.md).
 */
export const TURN_BUDGET_MS = 10;

/**
 * Commands for session actors, held until the event loop has read everything that arrived and
 * then delivered together, in the order they came. Each delivery runs a session's XState step;
 * run back to back, the steps of one turn find the machine's code and XState's hot in the CPU's
 * caches instead of cold after each request's HTTP parsing, validation and redaction. Over HTTP
 * under load this took about a third off the service's CPU per event (docs/decisions/0010-commands-of-a-turn-delivered-together.md).
 *
 * `setImmediate` by default: it runs once the poll phase has handled every ready socket, so one
 * batch holds the commands of all requests read in that turn, and a lone request waits only for
 * the end of its own turn. A turn delivers for at most TURN_BUDGET_MS; what is left goes first in
 * the next turn, after the poll phase has read the sockets again.
 */
export class CommandBatch {
  private queued: (() => void)[] = [];
  /** The next command of `queued` to deliver: the ones before it are delivered. */
  private next = 0;
  private scheduled = false;

  constructor(
    private readonly onError: (error: unknown) => void,
    private readonly schedule: (drain: () => void) => void = (drain) => void setImmediate(drain),
    private readonly now: () => number = () => performance.now(),
    private readonly budgetMs = TURN_BUDGET_MS,
  ) {}

  /** Runs `deliver` with the next batch. */
  add(deliver: () => void): void {
    this.queued.push(deliver);
    if (!this.scheduled) {
      this.scheduled = true;
      this.schedule(() => this.deliverTurn());
    }
  }

  /** Delivers everything queued now (shutdown: what was asked before the stop is still delivered). */
  drain(): void {
    this.deliverUntil(Number.POSITIVE_INFINITY);
  }

  private deliverTurn(): void {
    this.scheduled = false;
    this.deliverUntil(this.now() + this.budgetMs);
    if (this.next < this.queued.length && !this.scheduled) {
      this.scheduled = true;
      this.schedule(() => this.deliverTurn());
    }
  }

  /** Delivers in order until none is left or `deadline` has passed (at least one each call). */
  private deliverUntil(deadline: number): void {
    while (this.next < this.queued.length) {
      const deliver = this.queued[this.next]!;
      this.next += 1;
      try {
        deliver();
      } catch (error) {
        // One failing delivery must not keep the rest of the turn's commands from their sessions.
        this.onError(error);
      }
      if (this.now() >= deadline) break;
    }
    if (this.next === this.queued.length) {
      this.queued = [];
      this.next = 0;
    } else if (this.next > 1024 && this.next * 2 > this.queued.length) {
      // A backlog carried across turns: drop the delivered ones so the array does not only grow.
      this.queued = this.queued.slice(this.next);
      this.next = 0;
    }
  }
}
