import { Router } from 'express';
import type { VoiceStarted } from '../../machines/session/machine-events.js';
import { startVoice, stopVoice } from '../../use-cases/voice-call.js';
import { replyOrThrow, unlessBusy } from '../ask.js';
import type { AppDeps } from '../deps.js';
import { traceFor } from '../request-context.js';
import { START_EXAMPLES, STOP_EXAMPLES } from '../schemas/examples.js';
import type { RouteDoc } from '../route-doc.js';
import { sessionKeyOr422 } from '../session-key-param.js';
import { ErrorBody } from '../schemas/common.schema.js';
import type { AssistantStartBody } from '../schemas/voice.schema.js';
import { AssistantStartIn, AssistantStartOut, AssistantStopIn, AssistantStopOut } from '../schemas/voice.schema.js';
import { parseClientBody } from '../client-body.js';
import { clientIdHeader } from '../client-id.js';
import type { RouteModule } from '../route-module.js';

const BUSY = {
  description:
    'the session cap is reached, the memory budget is spent, or the session is busy with earlier voice commands; retry',
  schema: ErrorBody,
};

export const voiceRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    operationId: 'startAssistantSession',
    path: '/v1/assistant/session/start',
    tag: 'sdk',
    summary: 'Start or resume the voice session',
    description:
      'Start (or resume) the voice session: room, one agent dispatch, participant token. Creates ' +
      'the session if unknown; media faults degrade the start into warnings, never fail it.',
    body: AssistantStartIn,
    bodyExamples: START_EXAMPLES,
    responses: {
      200: { description: 'the session is active', schema: AssistantStartOut },
      422: {
        description:
          'a field is missing or of the wrong type, session_id "unknown" without a user_id, or the body nests deeper than 32 levels',
        schema: ErrorBody,
      },
      503: BUSY,
    },
  },
  {
    method: 'post',
    operationId: 'stopAssistantSession',
    path: '/v1/assistant/session/stop',
    tag: 'sdk',
    summary: 'Stop the voice session',
    description:
      'Stop the voice session: the room is deleted and reengagement evaluated. Idempotent on an inactive session.',
    body: AssistantStopIn,
    bodyExamples: STOP_EXAMPLES,
    responses: {
      200: { description: 'the session is inactive', schema: AssistantStopOut },
      404: { description: 'no such session', schema: ErrorBody },
      422: {
        description:
          'a field is missing or of the wrong type, session_id "unknown" without a user_id, or the body nests deeper than 32 levels',
        schema: ErrorBody,
      },
      503: BUSY,
    },
  },
];

/** Deployed SDKs read the `livekit_*` names; the documented names are the `media_*` ones (docs/reference/field-sdk-calls.md). */
function startBody(started: VoiceStarted): AssistantStartBody {
  return {
    token: started.token,
    media_url: started.media_url,
    media_room: started.room,
    expires_in_sec: started.expires_in_sec,
    session_id: started.session_id,
    livekit_url: started.media_url,
    livekit_room: started.room,
    warnings: started.warnings,
    assistant_invocation_id: started.assistant_invocation_id,
  };
}

export function voiceRoutes({ system, config, sdkConfig, sessionKeys }: AppDeps): Router {
  const router = Router();
  router.post('/v1/assistant/session/start', async (req, res) => {
    // user_id and screen are kept, logged and put in the token: the same redaction as an event's.
    const { sent, body } = parseClientBody(AssistantStartIn, req.body, config.privacy.piiRules);
    // A legacy `unknown` session is the user's own, as for every other call: never a room shared by all.
    const key = sessionKeyOr422(sessionKeys, body.session_id, sent.user_id);
    const trace = traceFor(res, body);
    const result = await startVoice(
      system.sessionHost,
      key,
      { trace, user_id: body.user_id, screen: body.screen },
      system.tokens,
    );
    res.json(startBody(unlessBusy(replyOrThrow(result, key))));
  });
  router.post('/v1/assistant/session/stop', async (req, res) => {
    const { sent, body } = parseClientBody(AssistantStopIn, req.body, config.privacy.piiRules);
    const key = sessionKeyOr422(sessionKeys, body.session_id, sent.user_id);
    const trace = traceFor(res, body);
    const result = await stopVoice(system.sessionHost, key, {
      trace,
      sdk_overrides: sdkConfig.overrides(),
      header_client_id: clientIdHeader(req) ?? null,
    });
    const { session_id, active, warnings } = unlessBusy(replyOrThrow(result, key));
    res.json({ session_id, active, warnings });
  });
  return router;
}

export const voiceRoute: RouteModule = { docs: voiceRouteDocs, router: voiceRoutes };
