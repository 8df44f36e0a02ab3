import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { TalliedCounter } from './tallied-counter.js';

/** Where gauges read what they report at scrape time; filled in as the parts are built. */
export interface MetricSources {
  sessions?: () => { running: number; hibernated: number };
  sseStreams?: () => number;
}

/**
 * The service's own metrics, in a registry of their own: every app built (tests build hundreds)
 * gets fresh counters, while Node's default metrics are process-wide and collected once.
 */
export interface ServiceMetrics {
  registry: Registry;
  sources: MetricSources;
  eventsIngested: TalliedCounter<'type'>;
  triggerDecisions: Counter<'reason' | 'outcome'>;
  voiceStarts: Counter<'outcome' | 'warning'>;
  activityItems: TalliedCounter<'kind'>;
  mediaCallDuration: Histogram<'call' | 'outcome'>;
  httpRequestDuration: Histogram<'route' | 'method' | 'status'>;
  actorStepDuration: Histogram<'command'>;
  /** Dispatch to the agent's first context fetch, which it makes once in the room (docs/explanation/voice.md). */
  agentJoinDuration: Histogram;
  /** What the agent watch saw of a call's agent: joined, redispatched, dispatch_failed, agent_left. */
  agentOutcomes: Counter<'outcome'>;
  /**
   * Open WebSocket connections: the WebSocket endpoint calls `inc()` when one opens and `dec()`
   * when it closes.
   */
  wsConnections: Gauge;
}

const FAST_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1];
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function createServiceMetrics(): ServiceMetrics {
  const registry = new Registry();
  const sources: MetricSources = {};
  const registers = [registry];
  new Gauge({
    name: 'kyc_sessions',
    help: 'Sessions held, by status: running as an actor or hibernated as data',
    labelNames: ['status'],
    registers,
    collect() {
      const counts = sources.sessions?.() ?? { running: 0, hibernated: 0 };
      this.set({ status: 'running' }, counts.running);
      this.set({ status: 'hibernated' }, counts.hibernated);
    },
  });
  new Gauge({
    name: 'kyc_sse_connections',
    help: 'Open activity streams (GET /api/activity/stream)',
    registers,
    collect() {
      this.set(sources.sseStreams?.() ?? 0);
    },
  });
  return {
    registry,
    sources,
    eventsIngested: new TalliedCounter({
      name: 'kyc_events_ingested_total',
      help: 'SDK events held by a session, by event type (past 64 types this version does not know, "other")',
      labelName: 'type',
      registers,
    }),
    triggerDecisions: new Counter({
      name: 'kyc_trigger_decisions_total',
      help: 'Trigger evaluations, by reason and outcome (triggered, suppressed, no_match)',
      labelNames: ['reason', 'outcome'],
      registers,
    }),
    voiceStarts: new Counter({
      name: 'kyc_voice_starts_total',
      help: 'Voice sessions started, by outcome (ok, degraded) and warnings (comma-separated, "none")',
      labelNames: ['outcome', 'warning'],
      registers,
    }),
    activityItems: new TalliedCounter({
      name: 'kyc_activity_items_total',
      help: 'Activity items recorded, by kind',
      labelName: 'kind',
      registers,
    }),
    mediaCallDuration: new Histogram({
      name: 'kyc_media_call_duration_seconds',
      help: 'Media provider calls, by call and outcome (ok, failed)',
      labelNames: ['call', 'outcome'],
      buckets: HTTP_BUCKETS,
      registers,
    }),
    httpRequestDuration: new Histogram({
      name: 'kyc_http_request_duration_seconds',
      help: 'HTTP requests, by route template, method and status',
      labelNames: ['route', 'method', 'status'],
      buckets: HTTP_BUCKETS,
      registers,
    }),
    actorStepDuration: new Histogram({
      name: 'kyc_actor_step_duration_seconds',
      help: 'One command processed by a session actor (the synchronous step), by command type',
      labelNames: ['command'],
      buckets: FAST_BUCKETS,
      registers,
    }),
    agentJoinDuration: new Histogram({
      name: 'kyc_voice_agent_join_seconds',
      help: "Agent dispatch to the agent's first context fetch from the room",
      buckets: [0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 20, 30],
      registers,
    }),
    agentOutcomes: new Counter({
      name: 'kyc_voice_agent_outcomes_total',
      help: "What the service saw of a call's agent: joined, redispatched, dispatch_failed, agent_left",
      labelNames: ['outcome'],
      registers,
    }),
    wsConnections: new Gauge({ name: 'kyc_ws_connections', help: 'Open WebSocket connections', registers }),
  };
}

let defaultRegistry: Registry | undefined;

/** Node's default metrics, collected once per process whatever the number of apps. */
function processRegistry(): Registry {
  if (!defaultRegistry) {
    defaultRegistry = new Registry();
    collectDefaultMetrics({ register: defaultRegistry });
  }
  return defaultRegistry;
}

/** The Prometheus text exposition of the process's default metrics and the service's own. */
export async function renderMetrics(metrics: ServiceMetrics): Promise<{ contentType: string; body: string }> {
  const [defaults, own] = await Promise.all([processRegistry().metrics(), metrics.registry.metrics()]);
  return { contentType: metrics.registry.contentType, body: `${defaults}\n${own}` };
}

/** The start mark of one actor step (the supervisor's synchronous `send`), for `observeStep`. */
export const stepStarted = (): number => performance.now();

/**
 * A metric's child for one label value, bound once (`metric.labels(value)`) and kept per metric:
 * label values here come from fixed or capped sets, and a bound child skips building a label object
 * and (for a histogram) an observer closure per call. Children read the metric's current series,
 * so `reset()` and scrapes see the same numbers as unbound calls.
 */
function boundChild<Child>(
  children: WeakMap<object, Map<string, Child>>,
  metric: { labels(value: string): Child },
  value: string,
): Child {
  let byValue = children.get(metric);
  if (!byValue) children.set(metric, (byValue = new Map<string, Child>()));
  let child = byValue.get(value);
  if (!child) byValue.set(value, (child = metric.labels(value)));
  return child;
}

type StepObserver = ReturnType<Histogram<'command'>['labels']>;
const stepObservers = new WeakMap<object, Map<string, StepObserver>>();

/**
 * Records one actor step in `kyc_actor_step_duration_seconds`. It runs on every command, so it
 * avoids prom-client's `startTimer` (two `hrtime` arrays, two closures and a merged label object
 * per call; git show d1df1cf:docs/benchmark-history.md has what that cost) and observes through the command type's bound child.
 */
export function observeStep(metrics: ServiceMetrics, command: string, startedMs: number): void {
  boundChild(stepObservers, metrics.actorStepDuration, command).observe((performance.now() - startedMs) / 1000);
}
