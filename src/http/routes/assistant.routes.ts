import { Router } from 'express';
import { replyOrThrow } from '../ask.js';
import { clientIdHeader } from '../client-id.js';
import type { AppDeps } from '../deps.js';
import { traceFor } from '../request-context.js';
import type { RouteDoc } from '../route-doc.js';
import type { PopupEvaluateBody } from '../schemas/assistant.schema.js';
import { AssistantEvaluateOut, PopupEvaluateIn, PopupOut } from '../schemas/assistant.schema.js';
import { ErrorBody } from '../schemas/common.schema.js';
import { POPUP_EXAMPLES } from '../schemas/examples.js';
import { sessionKeyOr422 } from '../session-key-param.js';
import { parseClientBody } from '../client-body.js';
import type { Request, Response } from 'express';
import { evaluatePopup, evaluateSurfaces } from '../../use-cases/decisions.js';
import type { RouteModule } from '../route-module.js';

const ERRORS = {
  422: { description: 'session_id missing or invalid, or another field is wrong; detail names it', schema: ErrorBody },
  503: { description: 'session cap reached with nothing evictable', schema: ErrorBody },
};

export const assistantRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    operationId: 'evaluatePopup',
    path: '/v1/assistant/popup/evaluate',
    tag: 'sdk',
    summary: 'Whether to show a dynamic popup now',
    description:
      'Whether to show a dynamic popup now, decided by the session: a failure still held for the ' +
      'current screen, or idling on a critical step; never while voice is active; at most one per ' +
      'assistant_prompt_cooldown_seconds; flag ui.dynamic_popups. Records popup_evaluate.',
    body: PopupEvaluateIn,
    bodyExamples: POPUP_EXAMPLES,
    responses: { 200: { description: 'the popup decision', schema: PopupOut }, ...ERRORS },
  },
  {
    method: 'post',
    operationId: 'evaluateAssistant',
    path: '/v1/assistant/evaluate',
    tag: 'sdk',
    summary: 'Trigger and popup decisions in one answer',
    description:
      'Trigger and popup in one answer: the trigger first; when it offers voice the popup is held back (voice_offered).',
    body: PopupEvaluateIn,
    bodyExamples: POPUP_EXAMPLES,
    responses: { 200: { description: 'both decisions', schema: AssistantEvaluateOut }, ...ERRORS },
  },
];

export function assistantRoutes({ system, sdkConfig, config, sessionKeys }: AppDeps): Router {
  const router = Router();
  const evaluation = (req: Request, res: Response, body: PopupEvaluateBody) => {
    const signals = body.signals ?? {};
    return {
      signals: {
        screen: signals.screen ?? body.screen ?? undefined,
        time_spent: signals.time_spent ?? undefined,
        errors: signals.errors ?? undefined,
        idle_seconds: signals.idle_seconds ?? undefined,
      },
      user_id: body.user_id ?? null,
      client_id: body.client_id ?? null,
      header_client_id: clientIdHeader(req) ?? null,
      sdk_overrides: sdkConfig.overrides(),
      trace: traceFor(res, body),
      popups_enabled: system.featureFlags['ui.dynamic_popups'] !== false,
      knowledge_base: system.agentContext.knowledgeBase,
    };
  };
  router.post('/v1/assistant/popup/evaluate', async (req, res) => {
    const { sent, body } = parseClientBody(PopupEvaluateIn, req.body, config.privacy.piiRules);
    const key = sessionKeyOr422(sessionKeys, body.session_id, sent.user_id);
    const request = evaluation(req, res, body);
    const result = await evaluatePopup(system.sessionHost, key, request);
    res.json(replyOrThrow(result, key));
  });
  router.post('/v1/assistant/evaluate', async (req, res) => {
    const { sent, body } = parseClientBody(PopupEvaluateIn, req.body, config.privacy.piiRules);
    const key = sessionKeyOr422(sessionKeys, body.session_id, sent.user_id);
    const request = evaluation(req, res, body);
    const result = await evaluateSurfaces(system.sessionHost, key, request);
    res.json({ session_id: key, ...replyOrThrow(result, key) });
  });
  return router;
}

export const assistantRoute: RouteModule = { docs: assistantRouteDocs, router: assistantRoutes };
