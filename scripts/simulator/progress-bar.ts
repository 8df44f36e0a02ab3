import cliProgress from 'cli-progress';
import type { SimulationProgress } from './simulation.js';

/**
 * The run's progress on a terminal (stderr, so stdout holds only the summary): journeys finished
 * out of the total, or seconds out of the duration when only a duration bounds the run.
 * Nothing at all when stderr is not a terminal (CI logs, pipes).
 */
export class ProgressBar {
  private readonly bar: cliProgress.SingleBar | undefined;

  constructor(private readonly bound: { sessions: number } | { durationSeconds: number }) {
    if (!process.stderr.isTTY) return;
    const unit = 'sessions' in bound ? 'journeys' : 's';
    this.bar = new cliProgress.SingleBar(
      {
        stream: process.stderr,
        format: `{bar} {percentage}% | {value}/{total} ${unit} | {requests} requests, {rps}/s | {failed} failed`,
        hideCursor: true,
        fps: 10,
      },
      cliProgress.Presets.shades_classic,
    );
    this.bar.start('sessions' in bound ? bound.sessions : Math.ceil(bound.durationSeconds), 0, {
      requests: 0,
      rps: '0.0',
      failed: 0,
    });
  }

  update(progress: SimulationProgress): void {
    if (!this.bar) return;
    const seconds = progress.elapsedMs / 1000;
    const value =
      'sessions' in this.bound
        ? progress.journeysFinished
        : Math.min(Math.floor(seconds), Math.ceil(this.bound.durationSeconds));
    this.bar.update(value, {
      requests: progress.requests,
      rps: seconds > 0 ? (progress.requests / seconds).toFixed(1) : '0.0',
      failed: progress.failed,
    });
  }

  stop(): void {
    this.bar?.stop();
  }
}
