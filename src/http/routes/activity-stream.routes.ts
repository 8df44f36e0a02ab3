import { Router } from 'express';
import type { ConnectionCounts } from '../connection-counts.js';
import { HttpError } from '../http-error.js';
import { requestContext } from '../request-context.js';
import type { RouteDoc } from '../route-doc.js';
import {
  ActivityStreamHeaders,
  ActivityStreamMessage,
  ActivityStreamQuery,
  ActivityStreamReset,
} from '../schemas/activity-stream.schema.js';
import { ActivityItemOut, ErrorBody } from '../schemas/common.schema.js';
import type { ActivityStreamHub } from '../sse/activity-stream-hub.js';
import { SSE_HEADERS } from '../sse/sse-response.js';
import { parseOr422 } from '../validate.js';
import type { SessionKeys } from '../../domain/session-key.js';
import type { RouteModule } from '../route-module.js';

const RETRY_AFTER_SECONDS = '5';

export const activityStreamRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    operationId: 'streamActivity',
    path: '/api/activity/stream',
    tag: 'operations',
    summary: 'Live activity as server-sent events',
    description:
      'Live activity as server-sent events: `event: activity` per item (`id:` = item id), a ' +
      'heartbeat comment every SSE_HEARTBEAT_SECONDS. `Last-Event-ID` resumes after that id; ' +
      '`event: reset` first when items were lost or the id is unknown.',
    query: ActivityStreamQuery,
    components: [ActivityItemOut, ActivityStreamReset],
    headers: {
      'Last-Event-ID': {
        description: 'resume after this activity id (a non-negative integer); empty: as if not sent',
        schema: ActivityStreamHeaders.shape['Last-Event-ID'],
        example: '42',
      },
    },
    extensions: {
      'x-sse-messages': {
        description:
          'The messages of the stream, as the EventSource API hands them over. Lines starting with ' +
          '`:` are heartbeats (every SSE_HEARTBEAT_SECONDS) and carry nothing.',
        retry: 'the first message sets `retry:` (ms) for reconnection',
        events: {
          activity: {
            id: 'the item id; send it back as Last-Event-ID to resume',
            data: { $ref: '#/components/schemas/ActivityItem' },
          },
          reset: { id: 'none', data: { $ref: '#/components/schemas/ActivityStreamReset' } },
        },
      },
    },
    responses: {
      200: {
        description: 'the stream (text/event-stream); each message is shown here',
        schema: ActivityStreamMessage,
        contentType: 'text/event-stream',
      },
      422: {
        description: 'unknown kind, repeated session_id, or Last-Event-ID not a non-negative integer',
        schema: ErrorBody,
      },
      503: { description: 'SSE_MAX_STREAMS streams already open, or shutting down (Retry-After)', schema: ErrorBody },
    },
  },
];

export function activityStreamRoutes(
  hub: ActivityStreamHub,
  maxStreams: number,
  connections: ConnectionCounts,
  sessionKeys: SessionKeys,
): Router {
  const router = Router();
  router.get('/api/activity/stream', (req, res) => {
    const query = parseOr422(ActivityStreamQuery, req.query, 'query');
    const headers = parseOr422(ActivityStreamHeaders, { 'Last-Event-ID': req.get('last-event-id')?.trim() }, 'header');
    // express answers HEAD with the GET route; a stream with no body would only hold a slot.
    if (req.method === 'HEAD') {
      res.set(SSE_HEADERS).end();
      return;
    }
    // The connection is a stream's now, counted apart from request connections until the stream ends.
    const claimed = connections.claim(req.socket, 'sse');
    if (claimed) res.once('close', () => connections.release(req.socket));
    const opened = !claimed
      ? ({ ok: false, reason: 'capacity' } as const)
      : hub.open(res, {
          sessionId: query.session_id === undefined ? undefined : sessionKeys.routingKey(query.session_id),
          kind: query.kind,
          afterId: headers['Last-Event-ID'],
          requestId: requestContext(res).requestId,
        });
    if (!opened.ok && opened.reason !== 'gone') {
      const detail =
        opened.reason === 'closed'
          ? 'server is shutting down; retry on another instance'
          : `too many activity streams open (at most ${maxStreams}); retry later`;
      throw new HttpError(503, detail, { 'Retry-After': RETRY_AFTER_SECONDS });
    }
  });
  return router;
}

export const activityStreamRoute: RouteModule = {
  docs: activityStreamRouteDocs,
  router: (deps) =>
    activityStreamRoutes(deps.activityStreams, deps.config.stream.maxStreams, deps.connections, deps.sessionKeys),
};
