import type { RequestHandler } from 'express';
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
      503: { description: 'shutting down', schema: Health },
    },
  },
];

/** A handler for the app itself rather than a router: every request passes this point. */
export function healthHandler(isShuttingDown: () => boolean): RequestHandler {
  return (_req, res) => {
    if (isShuttingDown()) res.status(503).json({ status: 'shutting_down' });
    else res.json({ status: 'ok' });
  };
}
