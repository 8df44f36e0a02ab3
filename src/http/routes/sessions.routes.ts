import { Router } from 'express';
import { SESSION_ID_PATTERN } from '../../domain/sdk-event.js';
import { InvalidCursorError } from '../../actor-system/session-listing.js';
import { buildAgentContext } from '../../domain/agent-context.js';
import { mergeSdkConfig } from '../../domain/sdk-config.js';
import { isoTime } from '../../integrations/clock.js';
import { isVoiceActive } from '../../machines/session/media-contract.js';
import { snapshotOrThrow } from '../ask.js';
import type { AppDeps } from '../deps.js';
import { HttpError } from '../http-error.js';
import type { RouteDoc } from '../route-doc.js';
import { SESSION_ID_PARAM, pageLimitDoc } from '../schemas/params.schema.js';
import { ErrorBody, sessionPathErrors } from '../schemas/common.schema.js';
import { ContextOut } from '../schemas/context.schema.js';
import { SessionOut } from '../schemas/session.schema.js';
import { MAX_SESSION_PAGE, SessionListOut, SessionListQueryIn } from '../schemas/session-list.schema.js';
import { pathSessionKey } from '../session-key-param.js';
import { parseOr422 } from '../validate.js';
import { contextView } from '../views/context-view.js';
import { sessionView } from '../views/session-view.js';
import type { RouteModule } from '../route-module.js';

const DEFAULT_PAGE_SIZE = 50;

export const sessionRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    operationId: 'listSessions',
    path: '/api/sessions',
    tag: 'operations',
    summary: 'Every session held, one page at a time, filtered and sorted',
    description:
      'Every session held, running or hibernated, one page at a time (cursor paging), filtered and sorted; reading wakes none.',
    query: SessionListQueryIn,
    queryOverrides: { limit: pageLimitDoc(MAX_SESSION_PAGE, DEFAULT_PAGE_SIZE) },
    responses: {
      200: { description: 'a page of session summaries', schema: SessionListOut },
      422: {
        description: 'a query parameter is out of range or not of its form (the cursor included)',
        schema: ErrorBody,
      },
    },
  },
  {
    method: 'get',
    operationId: 'getSession',
    path: '/api/sessions/{session_id}',
    tag: 'operations',
    summary: 'One live session as the service holds it',
    description: 'One live session as the service holds it (hints masked), for operators and debugging.',
    pathParams: { session_id: SESSION_ID_PARAM },
    responses: {
      200: { description: 'the session record', schema: SessionOut },
      ...sessionPathErrors(),
    },
  },
  {
    method: 'get',
    operationId: 'previewAgentContext',
    path: '/api/sessions/{session_id}/agent-context',
    tag: 'operations',
    summary: 'Preview what the voice agent would be given now',
    description:
      'What the voice agent would be given now (context and system prompt, masked as served), without recording a fetch or waking the session.',
    pathParams: { session_id: SESSION_ID_PARAM },
    responses: {
      200: { description: 'the context', schema: ContextOut },
      ...sessionPathErrors(),
    },
  },
];

export function sessionRoutes({ system, sessionKeys, sdkConfig }: AppDeps): Router {
  const router = Router();
  router.get('/api/sessions', async (req, res) => {
    const query = parseOr422(SessionListQueryIn, req.query, 'query');
    // A whole session id the service keys by its digest (it reads as an identity value) is searched
    // as that key: the raw text is in no session id, user id or screen the service keeps.
    const q = query.q !== undefined && SESSION_ID_PATTERN.test(query.q) ? sessionKeys.routingKey(query.q) : query.q;
    let page;
    try {
      page = await system.sessionHost.list({
        ...query,
        q,
        limit: query.limit ?? DEFAULT_PAGE_SIZE,
        sort: query.sort ?? 'last_activity',
        order: query.order ?? 'desc',
      });
    } catch (error) {
      if (error instanceof InvalidCursorError) throw new HttpError(422, `query: cursor: ${error.message}`);
      throw error;
    }
    res.json({
      ...page,
      sessions: page.sessions.map((summary) => ({ ...summary, last_activity_at: isoTime(summary.last_activity_at) })),
    });
  });
  router.get('/api/sessions/:session_id/agent-context', async (req, res) => {
    const session_id = pathSessionKey(sessionKeys, req.params);
    const snapshot = await snapshotOrThrow(system.sessionHost, session_id);
    const consentNotice = (clientId: string | null) => mergeSdkConfig(sdkConfig.overrides(), clientId).consent;
    res.json(
      contextView(
        buildAgentContext(snapshot.context, isVoiceActive(snapshot.value), { ...system.agentContext, consentNotice }),
      ),
    );
  });
  router.get('/api/sessions/:session_id', async (req, res) => {
    const session_id = pathSessionKey(sessionKeys, req.params);
    const snapshot = await snapshotOrThrow(system.sessionHost, session_id);
    res.json(sessionView(snapshot.context, snapshot.value));
  });
  return router;
}

export const sessionRoute: RouteModule = { docs: sessionRouteDocs, router: sessionRoutes };
