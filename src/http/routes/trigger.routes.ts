import { Router } from 'express';
import type { TriggerSignals } from '../../domain/trigger-policy.js';
import { commitRefused, replyOrThrow } from '../ask.js';
import { clientIdHeader } from '../client-id.js';
import type { AppDeps } from '../deps.js';
import { traceFor } from '../request-context.js';
import { TRIGGER_EXAMPLES } from '../schemas/examples.js';
import type { RouteDoc } from '../route-doc.js';
import { clientIdParam } from '../schemas/params.schema.js';
import { ErrorBody } from '../schemas/common.schema.js';
import type { TriggerEvaluateBody } from '../schemas/trigger.schema.js';
import { TriggerEvaluateIn, TriggerEvaluateOut } from '../schemas/trigger.schema.js';
import { sessionKeyOr422 } from '../session-key-param.js';
import { parseClientBody } from '../client-body.js';
import { evaluateTrigger } from '../../use-cases/decisions.js';
import type { RouteModule } from '../route-module.js';

export const triggerRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    operationId: 'evaluateTrigger',
    path: '/v1/assistant/trigger/evaluate',
    tag: 'sdk',
    summary: 'Whether to offer the voice assistant now',
    description:
      'Whether to offer the voice assistant now. With session_id, evaluated in that session (its ' +
      'screen, tenant, cooldown and suppressions; the session is created when unknown): ' +
      'repeated_errors counts the codes sent plus the failures the session holds for the screen ' +
      'within error_window_seconds, one failure reported both ways counting once. Without ' +
      'session_id, the policy alone on the codes sent.',
    body: TriggerEvaluateIn,
    bodyExamples: TRIGGER_EXAMPLES,
    headers: {
      'X-Client-ID': clientIdParam('tenant whose SDK config applies, when neither the session nor the body names one'),
    },
    responses: {
      200: { description: 'the decision', schema: TriggerEvaluateOut },
      422: {
        description:
          'a signal is not a number ≥ 0, errors is not an array of strings, another field is wrong, or the body nests deeper than 32 levels',
        schema: ErrorBody,
      },
      503: {
        description: 'session cap reached with nothing evictable, or the memory budget spent (Retry-After)',
        schema: ErrorBody,
      },
    },
  },
];

/** The signals as the policy reads them: null, as some SDK builds send, counts as absent. */
function signalsOf(body: TriggerEvaluateBody): TriggerSignals {
  const { screen, time_spent, errors, idle_seconds } = body.signals;
  return {
    screen: screen ?? undefined,
    time_spent: time_spent ?? undefined,
    errors: errors ?? undefined,
    idle_seconds: idle_seconds ?? undefined,
  };
}

export function triggerRoutes({ system, sdkConfig, config, sessionKeys }: AppDeps): Router {
  const router = Router();
  router.post('/v1/assistant/trigger/evaluate', async (req, res) => {
    // Screens, error codes and ids are kept and shown: the same redaction as an event's.
    const { sent, body } = parseClientBody(TriggerEvaluateIn, req.body, config.privacy.piiRules);
    const headerClientId = clientIdHeader(req);
    const request = {
      signals: signalsOf(body),
      user_id: body.user_id ?? null,
      client_id: body.client_id ?? null,
      header_client_id: headerClientId ?? null,
      sdk_overrides: sdkConfig.overrides(),
      trace: traceFor(res, body),
    };
    if (!body.session_id) {
      const { decision, commit } = await system.evaluateTriggerWithoutSession(request);
      if (commit !== 'kept') throw commitRefused(config.cluster.sessionHost.kind === 'restate', commit);
      res.json(decision);
      return;
    }
    const key = sessionKeyOr422(sessionKeys, body.session_id, sent.user_id);
    const result = await evaluateTrigger(system.sessionHost, key, request);
    res.json(replyOrThrow(result, key));
  });
  return router;
}

export const triggerRoute: RouteModule = { docs: triggerRouteDocs, router: triggerRoutes };
