import { Router } from 'express';
import { sessionReengagement } from '../../machines/session/session-reengagement.js';
import { isVoiceActive } from '../../machines/session/media-contract.js';
import { snapshotOrThrow } from '../ask.js';
import type { AppDeps } from '../deps.js';
import type { RouteDoc } from '../route-doc.js';
import { SESSION_ID_PARAM } from '../schemas/params.schema.js';
import { pathSessionKey } from '../session-key-param.js';
import { sessionPathErrors } from '../schemas/common.schema.js';
import { ReengagementOut } from '../schemas/voice.schema.js';
import type { RouteModule } from '../route-module.js';

export const reengagementRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    operationId: 'getReengagement',
    path: '/api/reengagement/{session_id}',
    tag: 'operations',
    summary: 'Whether to reach out to the user again',
    description:
      'Whether to reach out to the user again: voice not active, a voice session happened, and inactive for REENGAGEMENT_INACTIVITY_SECONDS.',
    pathParams: { session_id: SESSION_ID_PARAM },
    responses: {
      200: { description: 'the recommendation now', schema: ReengagementOut },
      ...sessionPathErrors(),
    },
  },
];

export function reengagementRoutes({ system, sessionKeys }: AppDeps): Router {
  const router = Router();
  router.get('/api/reengagement/:session_id', async (req, res) => {
    const session_id = pathSessionKey(sessionKeys, req.params);
    const snapshot = await snapshotOrThrow(system.sessionHost, session_id);
    res.json({
      session_id,
      ...sessionReengagement(snapshot.context, isVoiceActive(snapshot.value), system.clock.now()),
    });
  });
  return router;
}

export const reengagementRoute: RouteModule = { docs: reengagementRouteDocs, router: reengagementRoutes };
