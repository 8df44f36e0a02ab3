import { Router } from 'express';
import { sessionReengagement } from '../../machines/session/reengagement.js';
import { isVoiceActive } from '../../machines/session/voice.js';
import { snapshotOrThrow } from '../ask.js';
import type { AppDeps } from '../deps.js';
import type { RouteDoc } from '../route-doc.js';
import { SESSION_ID_PARAM } from '../schemas/params.js';
import { ErrorBody } from '../schemas/common.js';
import { ReengagementOut } from '../schemas/voice.js';
import { parseOr422 } from '../validate.js';
import { SessionParams } from './sessions.js';

export const reengagementRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    operationId: 'getReengagement',
    path: '/api/reengagement/{session_id}',
    tag: 'operations',
    summary: 'Whether to reach out to the user again: voice not active, a voice session happened, and inactive for REENGAGEMENT_INACTIVITY_SECONDS.',
    pathParams: { session_id: SESSION_ID_PARAM },
    responses: {
      200: { description: 'the recommendation now', schema: ReengagementOut },
      404: { description: 'no such live session', schema: ErrorBody },
      422: { description: 'session_id is not a valid id', schema: ErrorBody },
    },
  },
];

export function reengagementRoutes({ system, sessionKeys }: AppDeps): Router {
  const router = Router();
  router.get('/api/reengagement/:session_id', async (req, res) => {
    const session_id = sessionKeys.routingKey(parseOr422(SessionParams, req.params, 'path').session_id);
    const snapshot = await snapshotOrThrow(system.supervisor, session_id);
    res.json({ session_id, ...sessionReengagement(snapshot.context, isVoiceActive(snapshot.value), system.clock.now()) });
  });
  return router;
}
