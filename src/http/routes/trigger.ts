import { Router } from 'express';
import type { TriggerDecision, TriggerSignals } from '../../domain/trigger-policy.js';
import { replyOrThrow } from '../ask.js';
import { clientIdHeader } from '../client-id.js';
import type { AppDeps } from '../deps.js';
import { traceFor } from '../request-context.js';
import type { RouteDoc } from '../route-doc.js';
import { ErrorBody } from '../schemas/common.js';
import type { TriggerEvaluateBody } from '../schemas/trigger.js';
import { TriggerEvaluateIn, TriggerEvaluateOut } from '../schemas/trigger.js';
import { parseOr422 } from '../validate.js';

export const triggerRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/v1/assistant/trigger/evaluate',
    tag: 'sdk',
    summary:
      "Whether to offer the voice assistant now. With session_id, evaluated in that session (its screen, tenant, cooldown and suppressions; the session is created when unknown); without, the policy alone.",
    body: TriggerEvaluateIn,
    headers: { 'X-Client-ID': 'tenant whose SDK config applies, when neither the session nor the body names one' },
    responses: {
      200: { description: 'the decision', schema: TriggerEvaluateOut },
      422: { description: 'a signal is not a number ≥ 0, errors is not an array of strings, another field is wrong, or the body nests deeper than 32 levels', schema: ErrorBody },
      503: { description: 'session cap reached with nothing evictable, or the memory budget spent (Retry-After)', schema: ErrorBody },
    },
  },
];

/** The signals as the policy reads them: null, as some SDK builds send, counts as absent. */
function signalsOf(body: TriggerEvaluateBody): TriggerSignals {
  const { screen, time_spent, errors, idle_seconds } = body.signals;
  return { screen: screen ?? undefined, time_spent: time_spent ?? undefined, errors: errors ?? undefined, idle_seconds: idle_seconds ?? undefined };
}

export function triggerRoutes({ system, sdkConfig }: AppDeps): Router {
  const router = Router();
  router.post('/v1/assistant/trigger/evaluate', async (req, res) => {
    const body = parseOr422(TriggerEvaluateIn, req.body);
    const request = {
      signals: signalsOf(body),
      user_id: body.user_id ?? null,
      client_id: body.client_id ?? null,
      header_client_id: clientIdHeader(req) ?? null,
      sdk_overrides: sdkConfig.overrides(),
      trace: traceFor(res, body),
    };
    if (!body.session_id) {
      res.json(system.evaluateTriggerWithoutSession(request));
      return;
    }
    const result = await system.supervisor.ask<TriggerDecision>(body.session_id, 'create', (reply, at) => ({
      type: 'trigger.evaluate',
      ...request,
      at,
      reply,
    }));
    res.json(replyOrThrow(result, body.session_id));
  });
  return router;
}
