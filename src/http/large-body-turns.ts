import { AsyncResource } from 'node:async_hooks';

/**
 * A body this large or larger is taken in one per turn of the event loop. Reading, validating and
 * masking a body costs in proportion to its keys: a 60 KB event of 5,500 keys took about 50 ms of
 * the loop here, and a deployed SDK's event is under 2 KB
 * (docs/decisions/0041-large-bodies-take-turns.md).
 */
export const LARGE_BODY_BYTES = 8 * 1024;

/**
 * Large bodies' work, one body a turn of the event loop. Each body whose last byte arrived in a
 * turn used to be read, validated and masked in that turn: eight 60 KB events posted together made
 * a turn of 400 ms, and every new connection waited through two or three such turns (its accept,
 * then its request) before it was answered (docs/decisions/0041-large-bodies-take-turns.md). Taken
 * here, each waits for a turn of its own (`setImmediate`, in the order they arrived): a turn holds
 * one large body's work and what else was ready, and the light requests of a turn are served in it
 * as before. A task runs in the async context it was given in (the request's).
 */
export class LargeBodyTurns {
  /** In the order given; a task leaves it as it runs, so nothing it holds (its request) outlives its turn. */
  private readonly waiting: (() => void)[] = [];
  private scheduled = false;

  /** Runs `task` in a turn of its own, after the large bodies given before it. */
  take(task: () => void): void {
    this.waiting.push(AsyncResource.bind(task));
    this.schedule();
  }

  /** Large bodies waiting for their turn. */
  get queued(): number {
    return this.waiting.length;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.runOne);
  }

  private readonly runOne = (): void => {
    this.scheduled = false;
    const task = this.waiting.shift()!;
    // Scheduled from within the check phase: it runs in the next turn, after that turn's I/O.
    if (this.waiting.length > 0) this.schedule();
    task();
  };
}
