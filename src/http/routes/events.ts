import { Router } from 'express';
import { unixSeconds } from '../../integrations/clock.js';
import { redactForIngest } from '../../domain/event-redaction.js';
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
    summary: 'Ingest an SDK event; answers once the session holds it. Identity values in any field are masked on arrival (README: Privacy).',
    body: EventInSchema,
    responses: {
      200: { description: 'ingested', schema: EventOut },
      400: { description: 'malformed JSON', schema: ErrorBody },
      413: { description: 'body over 64 KiB', schema: ErrorBody },
      415: { description: 'not application/json', schema: ErrorBody },
      422: { description: 'schema validation failed; detail names the field', schema: ErrorBody },
      503: { description: 'session cap reached with nothing evictable', schema: ErrorBody },
    },
  },
];

export function eventRoutes({ system, config }: AppDeps): Router {
  const router = Router();
  router.post('/v1/events', async (req, res) => {
    const received = parseOr422(EventInSchema, req.body);
    // Nothing past this line sees a raw identity value (decisions 1).
    const { event, matchHint } = redactForIngest(received, config.piiRules);
    const trace = traceFor(res, event);
    const result = await system.supervisor.ask<IngestResult>(event.session_id, 'create', (reply, at) => ({
      type: 'session.ingest',
      event,
      matchHint,
      at,
      trace,
      reply,
    }));
    const { ingested_at_ms, warnings } = replyOrThrow(result, event.session_id);
    res.json({ status: 'ok', ingested_at: unixSeconds(ingested_at_ms), ...(warnings.length > 0 ? { warnings } : {}) });
  });
  return router;
}
