import type { RequestHandler } from 'express';
import type { StoreHealth } from '../../store/ports.js';
import type { RouteDoc } from '../route-doc.js';
import { Health } from '../schemas/common.js';

export const healthRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    operationId: 'getHealth',
    path: '/health',
    tag: 'operations',
    summary: 'Liveness; exempt from the API key and the rate limit.',
    authenticated: false,
    rateLimited: false,
    responses: {
      200: { description: 'serving', schema: Health },
      503: { description: 'shutting down, or the store refuses writes (disk full): `store.status` is `failing`', schema: Health },
    },
  },
];

/** A handler for the app itself rather than a router: every request passes this point. */
export function healthHandler(isShuttingDown: () => boolean, storeHealth: () => StoreHealth): RequestHandler {
  return (_req, res) => {
    const store = storeHealth();
    if (isShuttingDown()) res.status(503).json({ status: 'shutting_down', store });
    else if (store.status !== 'ok') res.status(503).json({ status: 'store_failing', store });
    else res.json({ status: 'ok', store });
  };
}
