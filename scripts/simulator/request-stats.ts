import type { Histogram } from 'hdr-histogram-js';
import { build } from 'hdr-histogram-js';

/** Latencies in milliseconds. */
export interface LatencySummary {
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export interface EndpointSummary {
  requests: number;
  failed: number;
  latency: LatencySummary;
}

/** How a request ended: its HTTP status, or why there was none. */
export type Outcome = number | 'network' | 'timeout';

/**
 * Request counts, failures and latency histograms, overall and per endpoint. Histograms keep
 * memory fixed however long a run lasts (the simulator is also a benchmark's load source).
 */
export class RequestStats {
  private readonly endpoints = new Map<string, { requests: number; failed: number; histogram: Histogram }>();
  private readonly all = newHistogram();
  private readonly failures = new Map<string, number>();
  requests = 0;
  failed = 0;

  record(endpoint: string, outcome: Outcome, latencyMs: number): void {
    let entry = this.endpoints.get(endpoint);
    if (!entry) this.endpoints.set(endpoint, (entry = { requests: 0, failed: 0, histogram: newHistogram() }));
    const micros = Math.max(1, Math.round(latencyMs * 1000));
    entry.requests += 1;
    entry.histogram.recordValue(micros);
    this.all.recordValue(micros);
    this.requests += 1;
    if (isFailure(outcome)) {
      entry.failed += 1;
      this.failed += 1;
      const key = String(outcome);
      this.failures.set(key, (this.failures.get(key) ?? 0) + 1);
    }
  }

  byEndpoint(): Record<string, EndpointSummary> {
    const summary: Record<string, EndpointSummary> = {};
    for (const [endpoint, entry] of [...this.endpoints].sort(([a], [b]) => a.localeCompare(b))) {
      summary[endpoint] = { requests: entry.requests, failed: entry.failed, latency: latencyOf(entry.histogram) };
    }
    return summary;
  }

  /** Failures by HTTP status, `network` (no answer) or `timeout`. */
  errorsByStatus(): Record<string, number> {
    return Object.fromEntries([...this.failures].sort(([a], [b]) => a.localeCompare(b)));
  }

  latency(): LatencySummary {
    return latencyOf(this.all);
  }
}

/** Journeys send only valid requests: anything but a 2xx answer is a failure. */
export const isFailure = (outcome: Outcome): boolean => typeof outcome !== 'number' || outcome < 200 || outcome > 299;

function newHistogram(): Histogram {
  return build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 120_000_000,
    numberOfSignificantValueDigits: 3,
    autoResize: true,
    useWebAssembly: false,
  });
}

const ms = (micros: number) => Math.round(micros / 10) / 100;

function latencyOf(histogram: Histogram): LatencySummary {
  if (histogram.totalCount === 0) return { p50: 0, p90: 0, p99: 0, max: 0 };
  return {
    p50: ms(histogram.getValueAtPercentile(50)),
    p90: ms(histogram.getValueAtPercentile(90)),
    p99: ms(histogram.getValueAtPercentile(99)),
    max: ms(histogram.maxValue),
  };
}
