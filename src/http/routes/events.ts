import { Router } from 'express';
import { unixSeconds } from '../../integrations/clock.js';
import { EventInSchema } from '../../domain/sdk-event.js';
import type { IngestResult } from '../../machines/session.events.js';
import { replyOrThrow } from '../ask.js';
import type { AppDeps } from '../deps.js';
import { traceFor } from '../request-context.js';
import type { RouteDoc } from '../route-doc.js';
import { ErrorBody, EventOut } from '../schemas/common.js';
import { parseOr422 } from '../validate.js';

export const eventRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/v1/events',
    tag: 'sdk',
    summary:
      'Ingest an SDK event; answers once the session holds it. Hints with masked!=true are masked on arrival. Past SESSION_MAX_BYTES older data gives way and the answer warns `session_budget_exceeded`.',
    body: EventInSchema,
    responses: {
      200: { description: 'ingested', schema: EventOut },
      400: { description: 'malformed JSON', schema: ErrorBody },
      413: { description: 'body over 64 KiB', schema: ErrorBody },
      415: { description: 'not application/json', schema: ErrorBody },
      422: { description: 'schema validation failed, or the body nests deeper than 32 levels; detail names the field or path', schema: ErrorBody },
      503: { description: 'session cap reached with nothing evictable, or the memory budget spent (Retry-After)', schema: ErrorBody },
    },
  },
];

export function eventRoutes({ system }: AppDeps): Router {
  const router = Router();
  router.post('/v1/events', async (req, res) => {
    const event = parseOr422(EventInSchema, req.body);
    const trace = traceFor(res, event);
    const result = await system.supervisor.ask<IngestResult>(event.session_id, 'create', (reply, at) => ({
      type: 'session.ingest',
      event,
      at,
      trace,
      reply,
    }));
    const { ingested_at_ms, warnings } = replyOrThrow(result, event.session_id);
    res.json({ status: 'ok', ingested_at: unixSeconds(ingested_at_ms), ...(warnings.length > 0 ? { warnings } : {}) });
  });
  return router;
}
