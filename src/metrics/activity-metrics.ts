import type { ActivityItem } from '../domain/activity.js';
import { KNOWN_EVENT_TYPES } from '../domain/sdk-event.js';
import type { ServiceMetrics } from './service-metrics.js';

/**
 * Event types are client-sent text, and field apps send types this version does not know
 * (`screen_view`, `analytics_data`). Known types are always their own label; the first
 * MAX_OTHER_EVENT_TYPES others seen are too, and any beyond count as `other`, so a client inventing
 * types cannot grow the series without bound.
 */
export const MAX_OTHER_EVENT_TYPES = 64;

function eventTypeLabeller(): (event: unknown) => string {
  const admitted = new Set<string>();
  return (event) => {
    if (typeof event !== 'string') return 'other';
    if (KNOWN_EVENT_TYPES.has(event) || admitted.has(event)) return event;
    if (admitted.size >= MAX_OTHER_EVENT_TYPES) return 'other';
    admitted.add(event);
    return event;
  };
}

function triggerOutcome(decision: { trigger?: unknown; reason?: unknown }): string {
  if (decision.trigger === true) return 'triggered';
  return decision.reason === 'none' ? 'no_match' : 'suppressed';
}

/** Counts what the activity store records: every item by kind, and the facts some kinds carry. */
function countActivity(item: ActivityItem, metrics: ServiceMetrics, eventTypeLabel: (event: unknown) => string): void {
  // Every item counts once or twice: kinds and event types are capped sets (tallied-counter.ts).
  metrics.activityItems.tally(item.kind);
  const { payload } = item;
  if (item.kind === 'event') metrics.eventsIngested.tally(eventTypeLabel(payload.event));
  if (item.kind === 'trigger') {
    const decision = (payload.decision ?? {}) as { trigger?: unknown; reason?: unknown };
    metrics.triggerDecisions.inc({ reason: String(decision.reason), outcome: triggerOutcome(decision) });
  }
  if (item.kind === 'session_start') {
    const warnings = Array.isArray(payload.warnings)
      ? payload.warnings.filter((warning): warning is string => typeof warning === 'string')
      : [];
    metrics.voiceStarts.inc({
      outcome: warnings.length === 0 ? 'ok' : 'degraded',
      warning: warnings.length === 0 ? 'none' : [...warnings].sort().join(','),
    });
  }
  if (item.kind === 'voice_agent' && typeof payload.outcome === 'string')
    metrics.agentOutcomes.inc({ outcome: payload.outcome });
}

/** The metrics' reader of live activity: counts each item as committed. */
export function activityCounter(metrics: ServiceMetrics): (item: ActivityItem) => void {
  const eventTypeLabel = eventTypeLabeller();
  return (item) => countActivity(item, metrics, eventTypeLabel);
}
