/**
 * GET /v1/assistant/presence/{session_id}: the connection a voice agent's job holds open while it
 * is in the call's room, so that its death is seen at once (src/use-cases/agent-presence.ts;
 * docs/decisions/0038-agent-presence-connections.md).
 */
import { Router } from 'express';
import { z } from 'zod';
import type { AgentPresence } from '../../use-cases/agent-presence.js';
import { PRESENCE_GRACE_MS } from '../../use-cases/agent-presence.js';
import type { AppDeps } from '../deps.js';
import { snapshotOrThrow } from '../ask.js';
import type { RouteDoc } from '../route-doc.js';
import { jsonData } from '../schemas/activity-stream.schema.js';
import { ErrorBody, sessionPathErrors } from '../schemas/common.schema.js';
import { SESSION_ID_PARAM } from '../schemas/params.schema.js';
import { pathSessionKey } from '../session-key-param.js';
import { SSE_HEADERS } from '../sse/sse-response.js';
import { parseOr422 } from '../validate.js';
import type { RouteModule } from '../route-module.js';

/** A comment line this often keeps proxies and idle timers from closing a quiet connection. */
const HEARTBEAT_MS = 15_000;

const PresenceQuery = z
  .object({
    identity: z
      .string()
      .min(1)
      .max(256)
      .regex(/^[\x21-\x7e]+$/, { error: 'must be the agent participant identity: printable ASCII, no spaces' })
      .meta({ description: "the job's participant identity in the call's room (LiveKit's `agent-…`)" }),
  })
  .meta({ id: 'AgentPresenceQuery' });

const AgentPresenceHeld = z
  .object({
    session_id: z.string(),
    identity: z.string(),
    grace_ms: z
      .int()
      .meta({ description: 'how long a closed connection waits to be opened again before the agent counts as gone' }),
  })
  .meta({ id: 'AgentPresenceHeld' });

const PresenceMessage = z
  .object({ event: z.literal('present'), data: jsonData('AgentPresenceHeld', 'JSON text of an AgentPresenceHeld') })
  .meta({
    id: 'AgentPresenceMessage',
    description: 'the one message, sent when the connection is held; heartbeat comments (`:`) follow every 15 s',
  });

export const agentPresenceRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    operationId: 'holdAgentPresence',
    path: '/v1/assistant/presence/{session_id}',
    tag: 'sdk',
    summary: "The voice agent's presence in a call",
    description:
      "Held open by the voice agent's job while it is in the call's room (server-sent events: one `present` message, then heartbeat comments). " +
      `When it closes and is not opened again within ${PRESENCE_GRACE_MS / 1000} s, the service takes that agent participant out of the room ` +
      'and the call checks its room at once: a job whose process died is replaced in seconds, not when the media server drops it.',
    pathParams: { session_id: SESSION_ID_PARAM },
    query: PresenceQuery,
    components: [AgentPresenceHeld],
    responses: {
      200: {
        description: 'held until either side closes it (text/event-stream)',
        schema: PresenceMessage,
        contentType: 'text/event-stream',
      },
      ...sessionPathErrors('no such live session'),
      503: { description: 'shutting down', schema: ErrorBody },
    },
  },
];

export function agentPresenceRoutes({ system, sessionKeys }: AppDeps, presence: AgentPresence): Router {
  const router = Router();
  router.get('/v1/assistant/presence/:session_id', async (req, res) => {
    const sessionKey = pathSessionKey(sessionKeys, req.params);
    const { identity } = parseOr422(PresenceQuery, req.query, 'query');
    await snapshotOrThrow(system.sessionHost, sessionKey);
    if (req.method === 'HEAD') {
      res.set(SSE_HEADERS).end();
      return;
    }
    const release = presence.hold(sessionKey, identity, () => res.end());
    res.writeHead(200, SSE_HEADERS);
    res.socket?.setNoDelay(true);
    res.write(
      `event: present\ndata: ${JSON.stringify({ session_id: req.params.session_id, identity, grace_ms: PRESENCE_GRACE_MS })}\n\n`,
    );
    const heartbeat = setInterval(() => res.write(':\n\n'), HEARTBEAT_MS);
    heartbeat.unref();
    res.once('close', () => {
      clearInterval(heartbeat);
      release();
    });
  });
  return router;
}

export const agentPresenceRoute: RouteModule = {
  docs: agentPresenceRouteDocs,
  router: (deps) => agentPresenceRoutes(deps, deps.agentPresence),
};
