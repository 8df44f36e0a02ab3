import { Router } from 'express';
import { mergeSdkConfig } from '../../domain/sdk-config.js';
import { readContext } from '../../use-cases/read-context.js';
import { replyOrThrow } from '../ask.js';
import type { AppDeps } from '../deps.js';
import { traceFor } from '../request-context.js';
import type { RouteDoc } from '../route-doc.js';
import { SESSION_ID_PARAM } from '../schemas/params.schema.js';
import { pathSessionKey } from '../session-key-param.js';
import { ErrorBody, sessionPathErrors } from '../schemas/common.schema.js';
import { ContextOut, ContextQuery } from '../schemas/context.schema.js';
import { parseOr422 } from '../validate.js';
import { contextView } from '../views/context-view.js';
import type { RouteModule } from '../route-module.js';

export const contextRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    operationId: 'getAgentContext',
    path: '/v1/assistant/context/{session_id}',
    tag: 'sdk',
    summary: "The voice agent's context and system prompt",
    description:
      "The voice agent's context: session state, knowledge for the current step, refresh policy and system prompt. Records voice_agent_context_fetch.",
    pathParams: { session_id: SESSION_ID_PARAM },
    query: ContextQuery,
    responses: {
      200: { description: 'the context', schema: ContextOut },
      ...sessionPathErrors('no such live session (a fetch never creates one)'),
      422: { description: 'session_id is not a valid id, or dispatch_id is not a dispatch id', schema: ErrorBody },
    },
  },
];

export function contextRoutes({ system, sessionKeys, sdkConfig }: AppDeps): Router {
  const router = Router();
  // The notice in force for the session's tenant, read from the SDK config at each fetch.
  const sources = {
    ...system.agentContext,
    consentNotice: (clientId: string | null) => mergeSdkConfig(sdkConfig.overrides(), clientId).consent,
  };
  router.get('/v1/assistant/context/:session_id', async (req, res) => {
    const session_id = pathSessionKey(sessionKeys, req.params);
    const query = parseOr422(ContextQuery, req.query, 'query');
    const trace = traceFor(res);
    const result = await readContext(system.sessionHost, session_id, trace, sources, query.dispatch_id ?? null);
    res.json(contextView(replyOrThrow(result, session_id)));
  });
  return router;
}

export const contextRoute: RouteModule = { docs: contextRouteDocs, router: contextRoutes };
