import { Router } from 'express';
import { redactValue } from '../../domain/event-redaction.js';
import { isoTime } from '../../integrations/clock.js';
import type { CallView, Delivery } from '../../store/call-book.js';
import { recordConsent } from '../../use-cases/consent.js';
import { eraseUser } from '../../use-cases/erasure.js';
import { failureOf, replyOrThrow } from '../ask.js';
import { joinCall } from '../../use-cases/handoff.js';
import { parseClientBody } from '../client-body.js';
import type { AppDeps } from '../deps.js';
import { HttpError } from '../http-error.js';
import { traceFor } from '../request-context.js';
import type { RouteDoc } from '../route-doc.js';
import {
  CallListOut,
  CallListQueryIn,
  CallOut,
  CallParams,
  ConsentIn,
  ConsentOut,
  DeliveryListOut,
  DeliveryListQueryIn,
  DeliveryOut,
  DeliveryParams,
  ErasureOut,
  HandoffListOut,
  OperatorJoinIn,
  OperatorJoinOut,
  MAX_CALL_PAGE,
  MAX_DELIVERY_PAGE,
  UserParams,
} from '../schemas/calls.schema.js';
import { ErrorBody, sessionPathErrors } from '../schemas/common.schema.js';
import { SESSION_ID_PARAM, pageLimitDoc } from '../schemas/params.schema.js';
import { pathSessionKey, sessionKeyOr422 } from '../session-key-param.js';
import { parseOr422 } from '../validate.js';
import type { RouteModule } from '../route-module.js';

const DEFAULT_CALLS = 20;
const DEFAULT_DELIVERIES = 50;
const NOT_KEPT = {
  description:
    'calls are not kept here: the activity log is shared (ACTIVITY_LOG) with sessions kept in this process (docs/explanation/calls.md)',
  schema: ErrorBody,
};
const UNREACHABLE = { description: 'cluster mode: Restate or Redis is unreachable; retry', schema: ErrorBody };

export const callRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    operationId: 'recordConsent',
    path: '/v1/assistant/consent',
    tag: 'sdk',
    summary: "Record the user's consent decision",
    description:
      "An entry of the session's consent record: given, refused or withdrawn, with the notice " +
      'version and language. Append-only; without consent given no transcript is kept, and a ' +
      'withdrawal removes what the running call kept. Records consent; webhook consent.recorded.',
    body: ConsentIn,
    bodyExamples: {
      given: {
        summary: 'consent given after the notice',
        value: {
          session_id: '7664f88e-4980-41c3-bec0-f0e1591ee548',
          decision: 'given',
          notice_version: '2026-11',
          language: 'hi',
        },
      },
    },
    responses: {
      200: { description: 'recorded', schema: ConsentOut },
      404: { description: 'no such session', schema: ErrorBody },
      422: { description: 'a field is missing or not of its form; detail names it', schema: ErrorBody },
      503: { description: 'the session is busy or the change could not be stored; retry', schema: ErrorBody },
    },
  },
  {
    method: 'get',
    operationId: 'listSessionCalls',
    path: '/api/sessions/{session_id}/calls',
    tag: 'operations',
    summary: "The session's calls, newest first",
    description:
      'Each call with its masked transcript (when consent was given), where it began and ended, the context versions read, how it ended and its report.',
    pathParams: { session_id: SESSION_ID_PARAM },
    query: CallListQueryIn,
    queryOverrides: { limit: pageLimitDoc(MAX_CALL_PAGE, DEFAULT_CALLS) },
    responses: {
      200: { description: 'the calls', schema: CallListOut },
      422: sessionPathErrors()[422],
      501: NOT_KEPT,
      503: UNREACHABLE,
    },
  },
  {
    method: 'get',
    operationId: 'getCall',
    path: '/api/calls/{call_id}',
    tag: 'operations',
    summary: 'One call',
    description: 'One call: its record, masked transcript and report.',
    pathParams: {
      call_id: {
        description: 'the call id (the assistant_invocation_id of its start)',
        schema: CallParams.shape.call_id,
      },
    },
    responses: {
      200: { description: 'the call', schema: CallOut },
      404: { description: 'no such call (never made, erased, or past TRANSCRIPT_RETENTION_DAYS)', schema: ErrorBody },
      422: { description: 'call_id is not of its form', schema: ErrorBody },
      501: NOT_KEPT,
      503: UNREACHABLE,
    },
  },
  {
    method: 'get',
    operationId: 'listHandoffs',
    path: '/api/handoffs',
    tag: 'operations',
    summary: 'Calls waiting for a person',
    description:
      'The running calls in which a person was asked for (`handoff_requested`) and no operator ' +
      'has joined yet, longest waiting first, each with its masked transcript ' +
      '(docs/explanation/handoff.md).',
    responses: { 200: { description: 'the waiting calls', schema: HandoffListOut }, 501: NOT_KEPT, 503: UNREACHABLE },
  },
  {
    method: 'post',
    operationId: 'joinCall',
    path: '/api/calls/{call_id}/join',
    tag: 'operations',
    summary: 'An operator joins a running call',
    description:
      "Records the operator's join (`operator_joined` in the session's activity and the call's " +
      "record, which takes the call out of the queue) and answers a LiveKit token for the call's " +
      'room. The agent in the room says a colleague is joining and steps back ' +
      '(docs/explanation/handoff.md).',
    pathParams: { call_id: { description: 'the call id', schema: CallParams.shape.call_id } },
    body: OperatorJoinIn,
    bodyExamples: { join: { summary: 'an operator joins', value: { operator: 'Meera (support)' } } },
    responses: {
      200: { description: 'joined: the token for the room', schema: OperatorJoinOut },
      404: { description: 'no such call', schema: ErrorBody },
      409: { description: 'the call has ended', schema: ErrorBody },
      422: { description: 'call_id or operator is not of its form', schema: ErrorBody },
      501: NOT_KEPT,
      503: {
        description: 'the join could not be recorded, or cluster mode cannot reach Restate or Redis; retry',
        schema: ErrorBody,
      },
    },
  },
  {
    method: 'delete',
    operationId: 'eraseUser',
    path: '/api/users/{user_id}',
    tag: 'operations',
    summary: 'Erase a user and everything kept of them',
    description:
      'Erases a user: every session, call, transcript, consent entry, activity item and pending ' +
      "webhook of theirs, from the database file's bytes too. Answers what it removed; the " +
      "erasure itself is kept without the user's data. Webhook user.erased.",
    pathParams: {
      user_id: { description: 'the user id as the app sends it', schema: UserParams.shape.user_id, example: 'user-42' },
    },
    responses: {
      200: { description: 'erased (the counts may all be 0: nothing was held)', schema: ErasureOut },
      422: { description: 'user_id is not of its form', schema: ErrorBody },
      501: NOT_KEPT,
      503: UNREACHABLE,
    },
  },
  {
    method: 'get',
    operationId: 'listWebhookDeliveries',
    path: '/api/webhooks/deliveries',
    tag: 'operations',
    summary: 'Webhook deliveries, newest first',
    description: 'One delivery per message and address, with its attempts, the last status and error.',
    query: DeliveryListQueryIn,
    queryOverrides: { limit: pageLimitDoc(MAX_DELIVERY_PAGE, DEFAULT_DELIVERIES) },
    responses: {
      200: { description: 'the deliveries', schema: DeliveryListOut },
      422: { description: 'a query parameter is out of range', schema: ErrorBody },
      501: NOT_KEPT,
      503: UNREACHABLE,
    },
  },
  {
    method: 'post',
    operationId: 'retryWebhookDelivery',
    path: '/api/webhooks/deliveries/{id}/retry',
    tag: 'operations',
    summary: 'Send a webhook delivery again',
    description:
      'Sends a delivery again now (a failed one too), with the same webhook-id; its earlier attempts stay counted. The body is {}.',
    pathParams: { id: { description: 'the delivery id', schema: DeliveryParams.shape.id, example: '12' } },
    responses: {
      200: { description: 'pending again, due now', schema: DeliveryOut },
      404: { description: 'no such delivery', schema: ErrorBody },
      422: { description: 'id is not a delivery id', schema: ErrorBody },
      501: NOT_KEPT,
      503: UNREACHABLE,
    },
  },
];

const iso = (ms: number | null): string | null => (ms === null ? null : isoTime(ms));

function callView(call: CallView) {
  return {
    ...call,
    started_at: isoTime(call.started_at),
    ended_at: iso(call.ended_at),
    handoff: call.handoff && {
      at: isoTime(call.handoff.at),
      reason: call.handoff.reason,
      screen: call.handoff.screen ?? null,
      joined: call.handoff.joined
        ? { at: isoTime(call.handoff.joined.at), operator: call.handoff.joined.operator }
        : null,
      unanswered_at: call.handoff.unanswered_at === undefined ? null : isoTime(call.handoff.unanswered_at),
    },
    transcript: call.transcript.map((turn) => ({ ...turn, at: isoTime(turn.at) })),
  };
}

function deliveryView(delivery: Delivery) {
  const { id, message_id, type, url, status, attempts, last_status, last_error } = delivery;
  return {
    id,
    message_id,
    type,
    url,
    status,
    attempts,
    created_at: isoTime(delivery.created_at),
    next_attempt_at: iso(delivery.next_at),
    last_attempt_at: iso(delivery.last_attempt_at),
    last_status,
    last_error,
  };
}

export function callRoutes({ system, config, sessionKeys }: AppDeps): Router {
  const router = Router();
  const records = () => {
    if (!system.callRecords)
      throw new HttpError(
        501,
        'calls are not kept by this instance: the activity log is shared (ACTIVITY_LOG) with sessions kept in this process (docs/explanation/calls.md)',
      );
    return system.callRecords;
  };
  router.post('/v1/assistant/consent', async (req, res) => {
    const { sent, body } = parseClientBody(ConsentIn, req.body, config.privacy.piiRules);
    const key = sessionKeyOr422(sessionKeys, body.session_id, (sent as { user_id?: string }).user_id);
    const result = await recordConsent(system.sessionHost, key, {
      decision: body.decision,
      notice_version: body.notice_version,
      language: body.language,
      trace: traceFor(res, body),
    });
    const recorded = replyOrThrow(result, key);
    res.json({
      session_id: recorded.session_id,
      decision: recorded.decision,
      notice_version: recorded.notice_version,
      language: recorded.language,
      recorded_at: isoTime(recorded.recorded_at_ms),
    });
  });
  router.get('/api/sessions/:session_id/calls', async (req, res) => {
    const key = pathSessionKey(sessionKeys, req.params);
    const query = parseOr422(CallListQueryIn, req.query, 'query');
    const calls = await records().callsOfSession(key, query.limit ?? DEFAULT_CALLS);
    res.json({ session_id: key, calls: calls.map(callView) });
  });
  router.get('/api/calls/:call_id', async (req, res) => {
    const { call_id } = parseOr422(CallParams, req.params, 'path');
    const call = await records().call(call_id);
    if (!call) throw new HttpError(404, `no call ${call_id}`);
    res.json(callView(call));
  });
  router.get('/api/handoffs', async (_req, res) => {
    res.json({ handoffs: (await records().waitingHandoffs()).map(callView) });
  });
  router.post('/api/calls/:call_id/join', async (req, res) => {
    const { call_id } = parseOr422(CallParams, req.params, 'path');
    const { operator } = parseOr422(OperatorJoinIn, req.body, 'body');
    const call = await records().call(call_id);
    if (!call) throw new HttpError(404, `no call ${call_id}`);
    const joined = await joinCall(
      { host: system.sessionHost, tokens: system.tokens, piiRules: config.privacy.piiRules },
      { call, operator, trace: traceFor(res) },
    );
    if (!joined.ok && joined.reason === 'call_ended') throw new HttpError(409, `call ${call_id} has ended`);
    if (!joined.ok) throw failureOf(joined.failure, call.session_id);
    const { room, identity, token, media_url, expires_in_sec } = joined;
    res.json({ call_id, session_id: call.session_id, room, identity, token, media_url, expires_in_sec });
  });
  router.delete('/api/users/:user_id', async (req, res) => {
    const { user_id } = parseOr422(UserParams, req.params, 'path');
    // Kept as the service keeps it: masked where it reads as an identity value.
    const kept = redactValue({ user_id }, config.privacy.piiRules).user_id;
    const erased = await eraseUser(records(), kept);
    res.json({ erasure_id: erased.erasure_id, erased_at: isoTime(erased.erased_at_ms), removed: erased.removed });
  });
  router.get('/api/webhooks/deliveries', async (req, res) => {
    const query = parseOr422(DeliveryListQueryIn, req.query, 'query');
    const deliveries = await records().deliveries({ limit: query.limit ?? DEFAULT_DELIVERIES, status: query.status });
    res.json({ deliveries: deliveries.map(deliveryView) });
  });
  router.post('/api/webhooks/deliveries/:id/retry', async (req, res) => {
    const { id } = parseOr422(DeliveryParams, req.params, 'path');
    const delivery = await records().retry(id);
    if (!delivery) throw new HttpError(404, `no delivery ${id}`);
    res.json(deliveryView(delivery));
  });
  return router;
}

export const callRoute: RouteModule = { docs: callRouteDocs, router: callRoutes };
