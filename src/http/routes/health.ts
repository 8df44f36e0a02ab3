import type { RequestHandler } from 'express';
import type { StoreHealth } from '../../store/ports.js';
import type { MemoryUse } from '../../actors/memory-budget.js';
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
    responses: {
      200: { description: 'serving', schema: Health },
      503: { description: 'shutting down, or the store refuses writes (disk full): `store.status` is `failing`', schema: Health },
    },
  },
];

export interface HealthSources {
  isShuttingDown: () => boolean;
  store: () => StoreHealth;
  memory: () => MemoryUse;
  connections: () => Record<ConnectionKind, number>;
}

/** A handler for the app itself rather than a router: every request passes this point. */
export function healthHandler(sources: HealthSources): RequestHandler {
  return (_req, res) => {
    const store = sources.store();
    const body = { store, memory: sources.memory(), connections: sources.connections() };
    if (sources.isShuttingDown()) res.status(503).json({ status: 'shutting_down', ...body });
    else if (store.status !== 'ok') res.status(503).json({ status: 'store_failing', ...body });
    else res.json({ status: 'ok', ...body });
  };
}
