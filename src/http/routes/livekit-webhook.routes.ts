/**
 * POST /v1/livekit/webhook: what the media server tells the service of its rooms
 * (docs/explanation/voice.md, "Webhooks from the media server"). An agent that left a room, or a
 * room that finished, makes that call's session check its room at once, instead of at its next
 * VOICE_ROOM_CHECK_SECONDS: a crashed agent's call is taken over in seconds.
 */
import express, { Router } from 'express';
import { WebhookReceiver } from 'livekit-server-sdk';
import { z } from 'zod';
import { isAgentKind } from '../../integrations/livekit-media.js';
import { checkAgentNow } from '../../use-cases/agent-check.js';
import type { AppDeps } from '../deps.js';
import { HttpError } from '../http-error.js';
import type { RouteDoc } from '../route-doc.js';
import { ErrorBody } from '../schemas/common.schema.js';
import type { RouteModule } from '../route-module.js';

/** LiveKit's webhook bodies are a few hundred bytes; nothing unsigned is held past this. */
const MAX_WEBHOOK_BYTES = 64 * 1024;
/** What livekit-server sends (`application/webhook+json`), and plain JSON. */
const JSON_TYPES = ['application/webhook+json', 'application/json'];

const LiveKitWebhookIn = z
  .looseObject({
    event: z.string().meta({
      description:
        'participant_left, room_finished, …: the events that need nothing from the service are taken and ignored',
    }),
    room: z.looseObject({ name: z.string() }).optional(),
    participant: z.looseObject({ identity: z.string(), kind: z.union([z.string(), z.int()]).optional() }).optional(),
  })
  .meta({ id: 'LiveKitWebhookIn' });

const LiveKitWebhookOut = z
  .object({
    event: z.string(),
    checked: z.boolean().meta({ description: "whether a call's session checks its room now because of it" }),
  })
  .meta({ id: 'LiveKitWebhookTaken' });

export const liveKitWebhookRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    operationId: 'receiveLiveKitWebhook',
    path: '/v1/livekit/webhook',
    tag: 'sdk',
    summary: "The media server's webhook",
    description:
      "Where LiveKit's webhooks go (`webhook.urls` in its configuration, signed with LIVEKIT_API_KEY). " +
      'Its `Authorization` token, over the body, is the only credential, so no X-API-Key. ' +
      'An agent that left a room, or a room that finished, makes that call check its room now.',
    body: LiveKitWebhookIn,
    authenticated: false,
    responses: {
      200: { description: 'taken', schema: LiveKitWebhookOut },
      400: { description: 'the body is not JSON', schema: ErrorBody },
      401: { description: "not signed by the media server's key, or no media server configured", schema: ErrorBody },
      413: { description: 'larger than any webhook the media server sends (64 KB)', schema: ErrorBody },
      415: { description: 'the body is not JSON', schema: ErrorBody },
    },
  },
];

/** The session a room is for: `{MEDIA_ROOM_PREFIX}-{session}`; none for any other room. */
const sessionOfRoom = (room: string | undefined, prefix: string): string | undefined =>
  room?.startsWith(`${prefix}-`) && room.length > prefix.length + 1 ? room.slice(prefix.length + 1) : undefined;

export function liveKitWebhookRoutes({ system, config }: AppDeps): Router {
  const router = Router();
  const { livekitApiKey, livekitApiSecret, roomPrefix } = config.media;
  const receiver = livekitApiKey && livekitApiSecret ? new WebhookReceiver(livekitApiKey, livekitApiSecret) : undefined;
  // The body is read as text: its signature is over its exact bytes.
  const body = express.text({ type: JSON_TYPES, limit: MAX_WEBHOOK_BYTES });
  router.post('/v1/livekit/webhook', body, async (req, res) => {
    if (!req.is(JSON_TYPES))
      throw new HttpError(
        415,
        'the body must be JSON (Content-Type: application/webhook+json, as the media server sends it)',
      );
    const text = typeof req.body === 'string' ? req.body : '';
    try {
      JSON.parse(text);
    } catch {
      throw new HttpError(400, 'the body is not JSON');
    }
    if (!receiver)
      throw new HttpError(
        401,
        'no media server is configured to send webhooks here (LIVEKIT_API_KEY, LIVEKIT_API_SECRET)',
      );
    let event;
    try {
      event = await receiver.receive(text, req.get('authorization'));
    } catch {
      const detail =
        "not signed by the media server: Authorization must be a LiveKit webhook token over this body, signed with LIVEKIT_API_KEY's secret";
      throw new HttpError(401, detail);
    }
    const sessionKey = sessionOfRoom(event.room?.name, roomPrefix);
    const concernsAgent =
      event.event === 'room_finished' || (event.event === 'participant_left' && isAgentKind(event.participant?.kind));
    let checked = false;
    if (sessionKey !== undefined && concernsAgent) {
      const result = await checkAgentNow(system.sessionHost, sessionKey);
      checked = result.ok && result.value.checking;
    }
    res.json({ event: event.event, checked });
  });
  return router;
}

export const liveKitWebhookRoute: RouteModule = { docs: liveKitWebhookRouteDocs, router: liveKitWebhookRoutes };
