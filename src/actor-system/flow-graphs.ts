import { LRUCache } from 'lru-cache';
import type { ActivityItem, Trace } from '../domain/activity.js';
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

export interface FlowGraphs {
  /** Records `flow_graph_recorded` for a first sighting; false when the pair was seen before. */
  record(sighting: FlowGraphSighting): boolean;
  /** The recorder's reader of live activity: a graph recorded by another process is seen here too. */
  learn: (item: ActivityItem) => void;
}

/**
 * Which step sequences have been seen per `(client_id, flow_key)`, across sessions and restarts:
 * the first registration of one records `flow_graph_recorded`, later ones record nothing. Where
 * several processes share the log (cluster mode), each learns from the live items what the others
 * recorded, so a flow registered on one is not recorded again when it reaches another.
 */
export function createFlowGraphs(clock: AppClock, activity: ActivityLog): FlowGraphs {
  const seen = new LRUCache<string, true>({ max: MAX_FLOW_GRAPHS });
  const keyOf = (clientId: unknown, flowKey: unknown) => JSON.stringify([clientId ?? null, flowKey]);
  // What a durable log already holds was seen before a restart: recorded once, not once per process.
  for (const item of activity.list({ limit: MAX_FLOW_GRAPHS, kind: 'flow_graph_recorded' }))
    seen.set(keyOf(item.payload.client_id, item.payload.flow_key), true);
  return {
    record: (sighting) => {
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
    },
    learn: (item) => {
      if (item.kind === 'flow_graph_recorded') seen.set(keyOf(item.payload.client_id, item.payload.flow_key), true);
    },
  };
}
