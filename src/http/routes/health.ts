import type { RequestHandler } from 'express';
import type { MemoryUse } from '../../actors/memory-budget.js';
import type { ConnectionKind } from '../connection-counts.js';
import type { RouteDoc } from '../route-doc.js';
import { Health } from '../schemas/common.js';

export const healthRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/health',
    tag: 'operations',
    summary: 'Liveness, the memory budget in use and open connections by kind; exempt from the API key and the rate limit.',
    authenticated: false,
    responses: {
      200: { description: 'serving', schema: Health },
      503: { description: 'shutting down', schema: Health },
    },
  },
];

export interface HealthSources {
  isShuttingDown: () => boolean;
  memory: () => MemoryUse;
  connections: () => Record<ConnectionKind, number>;
}

/** A handler for the app itself rather than a router: every request passes this point. */
export function healthHandler(sources: HealthSources): RequestHandler {
  return (_req, res) => {
    const body = { memory: sources.memory(), connections: sources.connections() };
    if (sources.isShuttingDown()) res.status(503).json({ status: 'shutting_down', ...body });
    else res.json({ status: 'ok', ...body });
  };
}
