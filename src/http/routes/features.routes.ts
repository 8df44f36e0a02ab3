import { Router } from 'express';
import type { AppDeps } from '../deps.js';
import type { RouteDoc } from '../route-doc.js';
import { FeatureFlagsOut } from '../schemas/common.schema.js';
import type { RouteModule } from '../route-module.js';

export const featureRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    operationId: 'getFeatureFlags',
    path: '/api/features',
    tag: 'operations',
    summary: 'Feature flags',
    description: 'Feature flags: defaults overridden by FEATURE_FLAGS.',
    responses: { 200: { description: 'flag name to boolean', schema: FeatureFlagsOut } },
  },
];

export function featureRoutes({ system }: AppDeps): Router {
  const router = Router();
  router.get('/api/features', (_req, res) => {
    res.json({ flags: system.featureFlags });
  });
  return router;
}

export const featureRoute: RouteModule = { docs: featureRouteDocs, router: featureRoutes };
