import { LRUCache } from 'lru-cache';
import type { Trace } from '../domain/activity.js';
import type { AppClock } from '../integrations/clock.js';
import type { ActivityLog } from '../store/ports.js';

/** Tenants times flows stays small in practice; the bound only stops invented keys from growing memory. */
export const MAX_FLOW_GRAPHS = 10_000;

export interface FlowGraphSighting {
  client_id: string | null;
  flow_key: string;
  total_steps: number;
  session_id: string | null;
  user_id: string | null;
  trace: Trace;
}

/**
 * Which step sequences have been seen per `(client_id, flow_key)`, across sessions and restarts:
 * the first registration of one records `flow_graph_recorded`, later ones record nothing.
 */
export function createFlowGraphs(clock: AppClock, activity: ActivityLog): (sighting: FlowGraphSighting) => boolean {
  const seen = new LRUCache<string, true>({ max: MAX_FLOW_GRAPHS });
  const keyOf = (clientId: unknown, flowKey: unknown) => JSON.stringify([clientId ?? null, flowKey]);
  // What a durable log already holds was seen before a restart: recorded once, not once per process.
  for (const item of activity.list({ limit: MAX_FLOW_GRAPHS, kind: 'flow_graph_recorded' })) seen.set(keyOf(item.payload.client_id, item.payload.flow_key), true);
  return (sighting) => {
    const key = keyOf(sighting.client_id, sighting.flow_key);
    if (seen.has(key)) return false;
    seen.set(key, true);
    activity.append({
      kind: 'flow_graph_recorded',
      at: clock.now(),
      session_id: sighting.session_id,
      user_id: sighting.user_id,
      payload: { flow_key: sighting.flow_key, client_id: sighting.client_id, total_steps: sighting.total_steps },
      trace: sighting.trace,
    });
    return true;
  };
}
