import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FlowCounts } from './journey.js';
import { noFlow, runJourney, simulatedSessionId } from './journey.js';
import type { EndpointSummary, LatencySummary } from './request-stats.js';
import { RequestStats } from './request-stats.js';
import { ServiceClient } from './service-client.js';

export { simulatedSessionId };

export interface SimulationOptions {
  /** The service, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** Journeys to run in all; with `durationSeconds` too, whichever ends first. One of the two is required. */
  sessions?: number | undefined;
  /** Stop starting journeys after this long, and cut the running ones short. */
  durationSeconds?: number | undefined;
  /** Journeys started per second. */
  rate: number;
  /** Journeys in flight at most; when all are busy, the next start waits. */
  concurrency: number;
  seed: number;
  /** Mean pause between a user's steps (±50%); 0 for load runs. */
  thinkMs: number;
  /** Budget of one request; past it the request counts as a timeout. */
  timeoutMs: number;
  apiKey?: string | undefined;
}

export interface SimulationProgress {
  journeysStarted: number;
  journeysFinished: number;
  requests: number;
  failed: number;
  elapsedMs: number;
}

export interface SimulationHooks {
  /** Called after each request and each finished journey. */
  onProgress?: (progress: SimulationProgress) => void;
  /** Ends the run early (Ctrl-C): no new journey starts, running ones stop before their next step. */
  signal?: AbortSignal;
}

export interface SimulationSummary {
  url: string;
  seed: number;
  rate: number;
  durationMs: number;
  /** `refused`: journeys played to the end that met a refusal (or no answer) on the way. */
  journeys: { started: number; completed: number; refused: number; cut: number };
  flow: FlowCounts;
  requests: { total: number; failed: number; perSecond: number };
  /** Keyed by route: `POST /v1/events`, `GET /v1/assistant/context/{session_id}`, … */
  endpoints: Record<string, EndpointSummary>;
  /** Failed requests by HTTP status, `network` (no answer) or `timeout`. */
  errorsByStatus: Record<string, number>;
  latency: LatencySummary;
}

/**
 * Plays KYC journeys against a running service and reports what happened. Journeys start at a
 * steady `rate` (on a fixed schedule, so a slow start does not shift the later ones), never more
 * than `concurrency` at once, until `sessions` have started or `durationSeconds` have passed.
 * Always ends by itself: journeys are finite, every request has a timeout, and the duration cuts
 * running journeys short.
 */
export async function runSimulation(
  options: SimulationOptions,
  hooks: SimulationHooks = {},
): Promise<SimulationSummary> {
  if (options.sessions === undefined && options.durationSeconds === undefined)
    throw new Error('runSimulation: give sessions, durationSeconds or both');
  const started = performance.now();
  const stats = new RequestStats();
  const counts = noFlow();
  const journeys = { started: 0, completed: 0, refused: 0, cut: 0 };
  const progress = (): SimulationProgress => ({
    journeysStarted: journeys.started,
    journeysFinished: journeys.completed + journeys.refused + journeys.cut,
    requests: stats.requests,
    failed: stats.failed,
    elapsedMs: performance.now() - started,
  });
  const report = () => hooks.onProgress?.(progress());
  const client = new ServiceClient({
    url: options.url,
    apiKey: options.apiKey,
    timeoutMs: options.timeoutMs,
    stats,
    onRequest: report,
  });

  const end = new AbortController();
  // Every running journey waits on it between steps: that many listeners is expected, not a leak.
  setMaxListeners(options.concurrency + 10, end.signal);
  const stopEarly = () => end.abort();
  hooks.signal?.addEventListener('abort', stopEarly, { once: true });
  const deadline =
    options.durationSeconds === undefined ? undefined : setTimeout(stopEarly, options.durationSeconds * 1000);

  const ended = new Promise<void>((resolve) => end.signal.addEventListener('abort', () => resolve(), { once: true }));
  const running = new Set<Promise<void>>();
  try {
    for (let index = 0; options.sessions === undefined || index < options.sessions; index += 1) {
      const due = started + (index * 1000) / options.rate;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait, undefined, { signal: end.signal }).catch(() => undefined);
      while (running.size >= options.concurrency && !end.signal.aborted) await Promise.race([...running, ended]);
      if (end.signal.aborted) break;
      journeys.started += 1;
      const journey = runJourney({
        seed: options.seed,
        index,
        thinkMs: options.thinkMs,
        client,
        counts,
        signal: end.signal,
      }).then((outcome) => {
        journeys[outcome] += 1;
        running.delete(journey);
        report();
      });
      running.add(journey);
    }
    await Promise.all(running);
  } finally {
    if (deadline !== undefined) clearTimeout(deadline);
    hooks.signal?.removeEventListener('abort', stopEarly);
  }

  const durationMs = performance.now() - started;
  return {
    url: options.url,
    seed: options.seed,
    rate: options.rate,
    durationMs,
    journeys,
    flow: counts,
    requests: {
      total: stats.requests,
      failed: stats.failed,
      perSecond: durationMs > 0 ? (stats.requests * 1000) / durationMs : 0,
    },
    endpoints: stats.byEndpoint(),
    errorsByStatus: stats.errorsByStatus(),
    latency: stats.latency(),
  };
}
