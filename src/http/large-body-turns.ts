import { AsyncResource } from 'node:async_hooks';

/**
 * A body this large or larger is taken in one per turn of the event loop. Reading, validating and
 * masking a body costs in proportion to its keys: a 60 KB event of 5,500 keys took about 50 ms of
 * the loop here, and a deployed SDK's event is under 2 KB
 * (docs/decisions/0041-large-bodies-take-turns.md).
 */
export const LARGE_BODY_BYTES = 8 * 1024;

/** The longest rest after one large body's work: one that took longer still lets the next wait no more than this. */
export const MAX_REST_MS = 100;

/**
 * What the queue times its work and its rests by: monotonic milliseconds, and a timer. The work
 * measured is the event loop's own (CPU, not a session's time), hence not the app's clock.
 */
export interface TurnTimer {
  now(): number;
  after(run: () => void, ms: number): void;
}

const LOOP_TIMER: TurnTimer = {
  now: () => performance.now(),
  after: (run, ms) => void setTimeout(run, ms),
};

/**
 * Large bodies' work, one body a turn of the event loop. Each body whose last byte arrived in a
 * turn used to be read, validated and masked in that turn: eight 60 KB events posted together made
 * a turn of 400 ms, and every new connection waited through two or three such turns (its accept,
 * then its request) before it was answered (docs/decisions/0041-large-bodies-take-turns.md). Taken
 * here, each waits for a turn of its own (`setImmediate`, in the order they arrived): a turn holds
 * one large body's work and what else was ready, and the light requests of a turn are served in it
 * as before. A task runs in the async context it was given in (the request's).
 *
 * After each one the next waits as long as it took (at most MAX_REST_MS), so under a stream of
 * them large bodies have at most half the loop: with one a turn, every turn still held 50 ms of a
 * key-dense event, and a new connection's accept, request and commit each waited through one
 * (docs/decisions/0044-large-bodies-have-half-the-loop.md).
 *
 * List pages take their turns in the same queue (middleware/page-turns.ts).
 */
export class LargeBodyTurns {
  /** In the order given; a task leaves it as it runs, so nothing it holds (its request) outlives its turn. */
  private readonly waiting: (() => void)[] = [];
  private scheduled = false;
  /** Before this (the timer's milliseconds) the next task rests: the last one's end plus what it took. */
  private restUntil = Number.NEGATIVE_INFINITY;

  constructor(private readonly timer: TurnTimer = LOOP_TIMER) {}

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
    const rest = this.restUntil - this.timer.now();
    // Scheduled from within the check phase, an immediate runs in the next turn, after that turn's
    // I/O; a rest ends in one too, so every task runs in the check phase, as one with no rest does.
    if (rest > 0) this.timer.after(() => setImmediate(this.runOne), rest);
    else setImmediate(this.runOne);
  }

  private readonly runOne = (): void => {
    this.scheduled = false;
    const task = this.waiting.shift()!;
    const started = this.timer.now();
    try {
      task();
    } finally {
      const ended = this.timer.now();
      this.restUntil = ended + Math.min(MAX_REST_MS, ended - started);
      if (this.waiting.length > 0) this.schedule();
    }
  };
}
