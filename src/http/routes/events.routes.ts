import type { RequestHandler } from 'express';
import { unixSeconds } from '../../integrations/clock.js';
import { redactForIngest } from '../../domain/event-redaction.js';
import { EventInSchema } from '../../domain/sdk-event.js';
import { keepProtoKey } from '../../domain/own.js';
import { ingestSdkEvent } from '../../use-cases/ingest-sdk-event.js';
import type { SdkEvent } from '../../domain/sdk-event.js';
import { replyOrThrow } from '../ask.js';
import type { AppDeps } from '../deps.js';
import { traceFor } from '../request-context.js';
import { EVENT_EXAMPLES } from '../schemas/examples.js';
import type { RouteDoc } from '../route-doc.js';
import { ErrorBody, EventOut } from '../schemas/common.schema.js';
import { sendJson } from '../send-json.js';
import { sessionKeyOr422 } from '../session-key-param.js';
import { parseOr422 } from '../validate.js';
import type { RouteModule } from '../route-module.js';
import { Router } from 'express';

/** The old SDK's `user_enrichment` names its user only in `properties`. */
function userIdInProperties(event: SdkEvent): string | undefined {
  const userId = event.properties?.user_id;
  return typeof userId === 'string' && userId.length <= 256 ? userId : undefined;
}

export const EVENTS_PATH = '/v1/events';

export const eventRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    operationId: 'ingestEvent',
    path: EVENTS_PATH,
    tag: 'sdk',
    summary: 'Ingest an SDK event',
    description:
      'Ingest an SDK event; answers once the event is kept: with SESSION_HOST=embedded once the ' +
      'session has applied it, with SESSION_HOST=restate once Restate has durably taken it, ' +
      'before the session runs it (docs/explanation/cluster.md). Identity values in any field are ' +
      'masked on arrival (docs/explanation/privacy.md). session_id "unknown" (legacy SDKs, any ' +
      'case) is kept per user as session unknown:{user_id}. Past SESSION_MAX_BYTES older data ' +
      "gives way and the event's activity item warns `session_budget_exceeded`; so does the " +
      'answer with SESSION_HOST=embedded, the one host that runs the event before answering.',
    body: EventInSchema,
    bodyExamples: EVENT_EXAMPLES,
    responses: {
      200: { description: 'ingested', schema: EventOut },
      400: { description: 'malformed JSON', schema: ErrorBody },
      413: { description: 'body over 64 KiB', schema: ErrorBody },
      415: { description: 'not application/json', schema: ErrorBody },
      422: {
        description:
          'schema validation failed, session_id "unknown" without a user_id, or the body nests deeper than 32 levels; detail names the field or path',
        schema: ErrorBody,
      },
      503: {
        description:
          'session cap reached with nothing evictable, the memory budget spent, the store refusing ' +
          'writes, the session too slow to answer, or with SESSION_HOST=restate Restate or Redis ' +
          'unreachable (detail names it; Retry-After)',
        schema: ErrorBody,
      },
    },
  },
];

/** The event as parsed, with a `__proto__` key the client sent (at the top or in `properties`) kept as data. */
function keptWhole(body: unknown, parsed: SdkEvent): SdkEvent {
  const sent = (body as { properties?: unknown }).properties;
  if (parsed.properties) keepProtoKey(sent, parsed.properties);
  return keepProtoKey(body, parsed);
}

/**
 * POST /v1/events, the commonest request by far. The app mounts it ahead of the other routers, so
 * an event walks only the middleware it needs (app.ts).
 */
export function ingestEvent({ system, config, sessionKeys }: AppDeps): RequestHandler {
  return async (req, res) => {
    const received = keptWhole(req.body, parseOr422(EventInSchema, req.body));
    // The key from the user id as sent: a user id that is itself an identity value is hashed, never kept.
    const sessionKey = sessionKeyOr422(
      sessionKeys,
      received.session_id,
      received.user_id ?? userIdInProperties(received),
    );
    // Nothing past this line sees a raw identity value (docs/decisions/0001-identity-values-masked-on-arrival.md).
    const input = redactForIngest(received, config.privacy.piiRules);
    const trace = traceFor(res, input.event);
    // The client's own id for the request, when it gave one: a retry of it reaches the session once, on any process.
    const requestId = req.get('idempotency-key') ?? req.get('x-request-id');
    const result = await ingestSdkEvent(system.sessionHost, sessionKey, input, trace, undefined, requestId);
    const { ingested_at_ms, warnings } = replyOrThrow(result, sessionKey);
    sendJson(res, {
      status: 'ok',
      ingested_at: unixSeconds(ingested_at_ms),
      ...(warnings.length > 0 ? { warnings } : {}),
    });
  };
}

export const eventRoute: RouteModule = {
  docs: eventRouteDocs,
  first: true,
  router: (deps) => Router().post(EVENTS_PATH, ingestEvent(deps)),
};
