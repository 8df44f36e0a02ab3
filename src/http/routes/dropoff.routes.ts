import { Router } from 'express';
import { phoneFacts } from '../../domain/dropoff.js';
import { replyOrThrow } from '../ask.js';
import type { AppDeps } from '../deps.js';
import { traceFor } from '../request-context.js';
import type { RouteDoc } from '../route-doc.js';
import { ErrorBody } from '../schemas/common.schema.js';
import { DROPOFF_CANCEL_EXAMPLES, DROPOFF_REGISTER_EXAMPLES } from '../schemas/examples.js';
import { DropoffCancelIn, DropoffCancelOut, DropoffRegisterIn, DropoffRegisterOut } from '../schemas/dropoff.schema.js';
import { sessionKeyOr422 } from '../session-key-param.js';
import { parseClientBody } from '../client-body.js';
import { cancelDropoff, registerDropoff } from '../../use-cases/register-dropoff.js';
import type { RouteModule } from '../route-module.js';

export const dropoffRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    operationId: 'registerDropoff',
    path: '/api/dropoff/register',
    tag: 'sdk',
    summary: 'Record a drop-off: the app went to the background',
    description:
      'The app went to the background: the session records a drop-off (dialable or not, last 4 ' +
      'digits; never the number) that the reengagement rule reads (channel phone when dialable). ' +
      'Cancelled by /api/dropoff/cancel or the user sending any event. Records ' +
      'dropoff_registered.',
    body: DropoffRegisterIn,
    bodyExamples: DROPOFF_REGISTER_EXAMPLES,
    responses: {
      200: { description: 'registered', schema: DropoffRegisterOut },
      422: { description: 'a field is missing or of the wrong type', schema: ErrorBody },
      503: { description: 'session cap reached with nothing evictable', schema: ErrorBody },
    },
  },
  {
    method: 'post',
    operationId: 'cancelDropoff',
    path: '/api/dropoff/cancel',
    tag: 'sdk',
    summary: 'Forget the registered drop-off',
    description:
      'Forget the registered drop-off (the SDK calls it on completeKycFlow). Idempotent; records dropoff_cancelled when one was registered.',
    body: DropoffCancelIn,
    bodyExamples: DROPOFF_CANCEL_EXAMPLES,
    responses: {
      200: { description: 'no drop-off is registered now', schema: DropoffCancelOut },
      404: { description: 'no such session', schema: ErrorBody },
      422: { description: 'a field is missing or of the wrong type', schema: ErrorBody },
    },
  },
];

export function dropoffRoutes({ system, config, sessionKeys }: AppDeps): Router {
  const router = Router();
  router.post('/api/dropoff/register', async (req, res) => {
    const { sent, body } = parseClientBody(DropoffRegisterIn, req.body, config.privacy.piiRules);
    const key = sessionKeyOr422(sessionKeys, body.session_id, sent.user_id);
    const trace = traceFor(res, body);
    // The number is reduced here to whether it is dialable and its last 4 digits, so the session (and anything that records it) never sees it.
    const facts = phoneFacts(sent.phone);
    const result = await registerDropoff(system.sessionHost, key, {
      user_id: body.user_id ?? null,
      ...facts,
      reason: body.reason ?? null,
      trace,
    });
    res.json({
      status: 'registered',
      session_id: key,
      has_dialable_phone: replyOrThrow(result, key).has_dialable_phone,
    });
  });
  router.post('/api/dropoff/cancel', async (req, res) => {
    const { sent, body } = parseClientBody(DropoffCancelIn, req.body, config.privacy.piiRules);
    const key = sessionKeyOr422(sessionKeys, body.session_id, sent.user_id);
    const trace = traceFor(res, body);
    const result = await cancelDropoff(system.sessionHost, key, trace);
    res.json({ status: 'cancelled', session_id: key, was_registered: replyOrThrow(result, key).cancelled });
  });
  return router;
}

export const dropoffRoute: RouteModule = { docs: dropoffRouteDocs, router: dropoffRoutes };
