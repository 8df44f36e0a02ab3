import { Router } from 'express';
import type { AppDeps } from '../deps.js';
import type { RouteDoc } from '../route-doc.js';
import { ActivityListOut, ActivityQuery, ErrorBody, MAX_ACTIVITY_PAGE } from '../schemas/common.schema.js';
import { pageLimitDoc } from '../schemas/params.schema.js';
import { parseOr422 } from '../validate.js';
import type { RouteModule } from '../route-module.js';

const DEFAULT_LIMIT = 100;

export const activityRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    operationId: 'listActivity',
    path: '/api/activity',
    tag: 'operations',
    summary: 'The most recent activity items, oldest first',
    query: ActivityQuery,
    // Sent as a string, parsed and bounded by the service: the document states the number it accepts.
    queryOverrides: { limit: pageLimitDoc(MAX_ACTIVITY_PAGE, DEFAULT_LIMIT) },
    responses: {
      200: { description: 'items, media readiness and feature flags', schema: ActivityListOut },
      422: { description: 'limit not an integer from 1 to 1000, or unknown kind', schema: ErrorBody },
    },
  },
];

export function activityRoutes({ system, mediaReady, sessionKeys }: AppDeps): Router {
  const router = Router();
  router.get('/api/activity', (req, res) => {
    const query = parseOr422(ActivityQuery, req.query, 'query');
    // As the service keys it: an id that reads as an identity value is filtered by its digest.
    const sessionId = query.session_id === undefined ? undefined : sessionKeys.routingKey(query.session_id);
    const items = system.activity.list({ limit: query.limit ?? DEFAULT_LIMIT, sessionId, kind: query.kind });
    res.json({ items, session_id: sessionId ?? null, media_ready: mediaReady, feature_flags: system.featureFlags });
  });
  return router;
}

export const activityRoute: RouteModule = { docs: activityRouteDocs, router: activityRoutes };
