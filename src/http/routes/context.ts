import { Router } from 'express';
import { readContext } from '../../sessions/context.js';
import { replyOrThrow } from '../ask.js';
import type { AppDeps } from '../deps.js';
import { traceFor } from '../request-context.js';
import type { RouteDoc } from '../route-doc.js';
import { SESSION_ID_PARAM } from '../schemas/params.js';
import { ErrorBody } from '../schemas/common.js';
import { ContextOut } from '../schemas/context.js';
import { parseOr422 } from '../validate.js';
import { contextView } from '../views/context-view.js';
import { SessionParams } from './sessions.js';

export const contextRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    operationId: 'getAgentContext',
    path: '/v1/assistant/context/{session_id}',
    tag: 'sdk',
    summary: "The voice agent's context: session state, knowledge for the current step, refresh policy and system prompt. Records voice_agent_context_fetch.",
    pathParams: { session_id: SESSION_ID_PARAM },
    responses: {
      200: { description: 'the context', schema: ContextOut },
      404: { description: 'no such live session (a fetch never creates one)', schema: ErrorBody },
      422: { description: 'session_id is not a valid id', schema: ErrorBody },
    },
  },
];

export function contextRoutes({ system, sessionKeys }: AppDeps): Router {
  const router = Router();
  router.get('/v1/assistant/context/:session_id', async (req, res) => {
    const session_id = sessionKeys.routingKey(parseOr422(SessionParams, req.params, 'path').session_id);
    const trace = traceFor(res);
    const result = await readContext(system.supervisor, session_id, trace, system.agentContext);
    res.json(contextView(replyOrThrow(result, session_id)));
  });
  return router;
}
