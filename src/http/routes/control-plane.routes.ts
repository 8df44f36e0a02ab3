import { z } from 'zod';
import type { RouteDoc } from '../route-doc.js';
import { clientIdParam } from '../schemas/params.schema.js';
import { ErrorBody } from '../schemas/common.schema.js';
import type { RouteModule } from '../route-module.js';
import { Router } from 'express';
import { clientIdHeader } from '../client-id.js';
import { HttpError } from '../http-error.js';
import { CONTROL_PLANE_PATH } from '../ws/control-plane.js';

export const controlPlaneRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    operationId: 'openControlPlane',
    path: '/v1/events/ws',
    tag: 'sdk',
    summary: 'WebSocket control plane',
    description:
      'WebSocket control plane (Upgrade: websocket). Frames: connect → ack; heartbeat both ways; ' +
      'control_state (screen_state, validation_failed) updates the session as POST /v1/events ' +
      'does → ack, given when that route would answer 200 (with SESSION_HOST=restate once Restate ' +
      'has taken the event, before the session runs it); trigger_evaluate → trigger_response; the ' +
      'server pushes command frames (suggest_start_voice_agent, show_popup) when the session ' +
      'decides; any other frame → error http_only. With API_KEY set the key comes in X-API-Key or ' +
      'the connect frame (else close 4401); before it, a socket gets no answer, takes no place ' +
      'among WS_MAX_CONNECTIONS, and must send it within 10 s. Bounds: WS_MAX_CONNECTIONS, ' +
      'WS_MAX_MESSAGES_PER_SECOND (close 4429), WS_MAX_FRAME_BYTES (close 1009), ' +
      'WS_IDLE_TIMEOUT_SECONDS (close 4408); shutdown answers the frames already taken, then ' +
      'closes with 1001. Every frame in both directions: docs/reference/field-sdk-calls.md, ' +
      'section "WebSocket control plane".',
    headers: {
      'X-API-Key': { description: 'optional here: the connect frame may carry api_key instead', schema: z.string() },
      'X-Client-ID': clientIdParam('tenant, when the connect frame names none'),
    },
    extensions: {
      'x-websocket-frames':
        'docs/reference/field-sdk-calls.md, section "WebSocket control plane": every frame in both directions',
    },
    responses: {
      101: { description: 'switching protocols' },
      401: { description: 'X-API-Key given and wrong', schema: ErrorBody },
      422: { description: 'X-Client-ID is sent and not a plain id (an empty one included)', schema: ErrorBody },
      426: { description: 'a plain GET without Upgrade: websocket', schema: ErrorBody },
      503: { description: 'WS_MAX_CONNECTIONS reached, or shutting down', schema: ErrorBody },
    },
  },
];

/** The control plane answers only upgrades (the server's 'upgrade' event); a plain GET is told so. */
export const controlPlaneRoute: RouteModule = {
  docs: controlPlaneRouteDocs,
  router: () =>
    Router().get(CONTROL_PLANE_PATH, (req) => {
      // Refused as the upgrade would refuse it, so the header's form is checked the same either way.
      clientIdHeader(req);
      throw new HttpError(426, 'GET /v1/events/ws is a WebSocket: send Upgrade: websocket', { Upgrade: 'websocket' });
    }),
};
