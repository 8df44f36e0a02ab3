import type { AppClock } from '../integrations/clock.js';

export interface MediaCallOutcome {
  call: string;
  outcome: 'ok' | 'failed';
  duration_ms: number;
  /** Epoch ms on the injected clock. */
  at: number;
}

const KEPT = 20;

/** The last media calls and how they went, for the health view: a small fixed window. */
export class MediaCallLog {
  private readonly calls: MediaCallOutcome[] = [];

  constructor(private readonly clock: AppClock) {}

  note(call: string, outcome: 'ok' | 'failed', seconds: number): void {
    this.calls.push({ call, outcome, duration_ms: Math.round(seconds * 1000 * 10) / 10, at: this.clock.now() });
    if (this.calls.length > KEPT) this.calls.shift();
  }

  /** Newest first. */
  recent(): MediaCallOutcome[] {
    return [...this.calls].reverse();
  }
}
