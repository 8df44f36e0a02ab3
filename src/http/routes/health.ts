import type { RequestHandler } from 'express';
import type { StoreHealth } from '../../store/ports.js';
import type { MemoryUse } from '../../actors/memory-budget.js';
import type { ClusterHealth } from '../../actors/cluster-health.js';
import { clusterHealthy } from '../../actors/cluster-health.js';
import type { ConnectionKind } from '../connection-counts.js';
import type { RouteDoc } from '../route-doc.js';
import { Health } from '../schemas/common.js';

export const healthRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    operationId: 'getHealth',
    path: '/health',
    tag: 'operations',
    summary: 'Liveness, the memory budget in use and open connections by kind; exempt from the API key and the rate limit.',
    authenticated: false,
    rateLimited: false,
    shutdownGated: false,
    responses: {
      200: { description: 'serving', schema: Health },
      503: {
        description: 'shutting down, the store refuses writes (disk full): `store.status` is `failing`, or in cluster mode (SESSION_HOST=restate) Restate or Redis is unreachable: `cluster` says which',
        schema: Health,
      },
    },
  },
];

export interface HealthSources {
  isShuttingDown: () => boolean;
  /** Present in cluster mode only. */
  cluster?: (() => Promise<ClusterHealth>) | undefined;
  store: () => StoreHealth;
  memory: () => MemoryUse;
  connections: () => Record<ConnectionKind, number>;
}

/** A handler for the app itself rather than a router: every request passes this point. */
export function healthHandler(sources: HealthSources): RequestHandler {
  return async (_req, res) => {
    const store = sources.store();
    const cluster = await sources.cluster?.();
    const body = { store, memory: sources.memory(), connections: sources.connections(), ...(cluster ? { cluster } : {}) };
    if (sources.isShuttingDown()) res.status(503).json({ status: 'shutting_down', ...body });
    else if (store.status !== 'ok') res.status(503).json({ status: 'store_failing', ...body });
    else if (cluster && !clusterHealthy(cluster)) res.status(503).json({ status: 'cluster_unreachable', ...body });
    else res.json({ status: 'ok', ...body });
  };
}
