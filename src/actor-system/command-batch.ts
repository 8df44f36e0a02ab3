/**
 * Commands for session actors, held until the event loop has read everything that arrived and
 * then delivered together, in the order they came. Each delivery runs a session's XState step;
 * run back to back, the steps of one turn find the machine's code and XState's hot in the CPU's
 * caches instead of cold after each request's HTTP parsing, validation and redaction. Over HTTP
 * under load this took about a third off the service's CPU per event (docs/decisions/0010-commands-of-a-turn-delivered-together.md).
 *
 * `setImmediate` by default: it runs once the poll phase has handled every ready socket, so one
 * batch holds the commands of all requests read in that turn, and a lone request waits only for
 * the end of its own turn.
 */
export class CommandBatch {
  private queued: (() => void)[] = [];

  constructor(
    private readonly onError: (error: unknown) => void,
    private readonly schedule: (drain: () => void) => void = (drain) => void setImmediate(drain),
  ) {}

  /** Runs `deliver` with the next batch. */
  add(deliver: () => void): void {
    this.queued.push(deliver);
    if (this.queued.length === 1) this.schedule(() => this.drain());
  }

  /** Delivers everything queued now (shutdown: what was asked before the stop is still delivered). */
  drain(): void {
    while (this.queued.length > 0) {
      const deliveries = this.queued;
      this.queued = [];
      for (const deliver of deliveries) {
        try {
          deliver();
        } catch (error) {
          // One failing delivery must not keep the rest of the turn's commands from their sessions.
          this.onError(error);
        }
      }
    }
  }
}
