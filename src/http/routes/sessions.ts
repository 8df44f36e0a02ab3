import { Router } from 'express';
import { z } from 'zod';
import { SessionId } from '../../domain/sdk-event.js';
import { snapshotOrThrow } from '../ask.js';
import type { AppDeps } from '../deps.js';
import type { RouteDoc } from '../route-doc.js';
import { SESSION_ID_PARAM } from '../schemas/params.js';
import { ErrorBody } from '../schemas/common.js';
import { SessionOut } from '../schemas/session.js';
import { parseOr422 } from '../validate.js';
import { sessionView } from '../views/session-view.js';

export const SessionParams = z.object({ session_id: SessionId });

export const sessionRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    operationId: 'getSession',
    path: '/api/sessions/{session_id}',
    tag: 'operations',
    summary: 'One live session as the service holds it (hints masked), for operators and debugging.',
    pathParams: { session_id: SESSION_ID_PARAM },
    responses: {
      200: { description: 'the session record', schema: SessionOut },
      404: { description: 'no such live session', schema: ErrorBody },
      422: { description: 'session_id is not a valid id', schema: ErrorBody },
    },
  },
];

export function sessionRoutes({ system }: AppDeps): Router {
  const router = Router();
  router.get('/api/sessions/:session_id', (req, res) => {
    const { session_id } = parseOr422(SessionParams, req.params, 'path');
    const snapshot = snapshotOrThrow(system.supervisor, session_id);
    res.json(sessionView(snapshot.context, snapshot.value));
  });
  return router;
}
