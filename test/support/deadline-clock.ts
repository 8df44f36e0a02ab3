import { SimulatedClock } from 'xstate';

/**
 * xstate's SimulatedClock, stopping at every deadline on the way when it moves. A plain
 * `increment` runs each timer due within the jump at its end, so a timer armed by a firing (the
 * idle check re-arming itself for the rest of the TTL) starts late by the rest of the jump. Here
 * each timer fires at its own time, as on a real clock, and a jump of a day is still one call.
 */
export class DeadlineClock extends SimulatedClock {
  private readonly deadlines = new Map<number, number>();

  override setTimeout(fn: (...args: unknown[]) => void, timeout: number): number {
    const id = super.setTimeout(() => {
      this.deadlines.delete(id);
      fn();
    }, timeout);
    this.deadlines.set(id, this.now() + timeout);
    return id;
  }

  override clearTimeout(id: number): void {
    this.deadlines.delete(id);
    super.clearTimeout(id);
  }

  override increment(ms: number): void {
    const target = this.now() + ms;
    for (let next = this.nextDeadline(); next !== undefined && next < target; next = this.nextDeadline()) {
      this.set(next);
      if (this.nextDeadline() === next) throw new Error(`a timer due at ${next} did not fire`);
    }
    this.set(target);
  }

  private nextDeadline(): number | undefined {
    let earliest: number | undefined;
    for (const deadline of this.deadlines.values())
      if (earliest === undefined || deadline < earliest) earliest = deadline;
    return earliest;
  }
}
