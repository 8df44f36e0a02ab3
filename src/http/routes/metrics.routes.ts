import { Router } from 'express';
import type { ServiceMetrics } from '../../metrics/service-metrics.js';
import { renderMetrics } from '../../metrics/service-metrics.js';
import type { RouteDoc } from '../route-doc.js';
import type { RouteModule } from '../route-module.js';

export const metricsRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    operationId: 'getMetrics',
    path: '/metrics',
    tag: 'operations',
    summary: 'Prometheus metrics',
    description: "Prometheus metrics (text exposition format): Node's defaults and the service's own (kyc_*).",
    responses: { 200: { description: 'the metrics', contentType: 'text/plain; version=0.0.4' } },
  },
];

export function metricsRoutes(metrics: ServiceMetrics): Router {
  const router = Router();
  router.get('/metrics', async (_req, res) => {
    const { contentType, body } = await renderMetrics(metrics);
    res.type(contentType).send(body);
  });
  return router;
}

export const metricsRoute: RouteModule = {
  docs: metricsRouteDocs,
  router: (deps) => metricsRoutes(deps.system.metrics),
};
