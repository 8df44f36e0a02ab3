import type { AppClock } from '../integrations/clock.js';

/**
 * One timer on the injected clock for "the earliest of many deadlines": asking for a later time
 * than the one armed changes nothing, an earlier one re-arms it. The supervisor keeps one for its
 * hibernation sweep and one for the store's wake deadlines, instead of a timer per session.
 */
export class EarliestTimer {
  private timer: unknown;
  private dueAt: number | undefined;

  constructor(
    private readonly clock: AppClock,
    private readonly fire: () => void,
  ) {}

  /** Arms the timer for `at` unless it is already armed for that time or earlier. */
  schedule(at: number): void {
    if (this.dueAt !== undefined && this.dueAt <= at) return;
    this.cancel();
    this.dueAt = at;
    this.timer = this.clock.setTimeout(
      () => {
        this.timer = this.dueAt = undefined;
        this.fire();
      },
      Math.max(0, at - this.clock.now()),
    );
  }

  cancel(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = this.dueAt = undefined;
  }
}
