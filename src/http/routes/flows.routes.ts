import { Router } from 'express';
import { flowProgress, flowSteps, stepFacts } from '../../domain/flow.js';
import type { FlowSetResult } from '../../machines/session/machine-events.js';
import { commitRefused, replyOrThrow } from '../ask.js';
import type { AppDeps } from '../deps.js';
import { traceFor } from '../request-context.js';
import type { RouteDoc } from '../route-doc.js';
import { ErrorBody } from '../schemas/common.schema.js';
import { FLOW_EXAMPLES } from '../schemas/examples.js';
import { FlowSetIn, FlowSetOut } from '../schemas/flows.schema.js';
import { sessionKeyOr422 } from '../session-key-param.js';
import { parseClientBody } from '../client-body.js';
import { setFlow } from '../../use-cases/set-flow.js';
import type { RouteModule } from '../route-module.js';

export const flowRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    operationId: 'setFlow',
    path: '/v1/flows/set',
    tag: 'sdk',
    summary: "Register the user's flow: its steps, current step and progress",
    description:
      "Register the user's flow in the session: its steps, the current step and progress. An " +
      'empty step_sequence forgets it (clearFlow). The first registration of steps per ' +
      '(client_id, flow_key) records flow_graph_recorded.',
    body: FlowSetIn,
    bodyExamples: FLOW_EXAMPLES,
    responses: {
      200: { description: 'the flow as the session holds it', schema: FlowSetOut },
      422: { description: 'flow_key missing, or another field is wrong; detail names it', schema: ErrorBody },
      503: { description: 'session cap reached with nothing evictable', schema: ErrorBody },
    },
  },
];

export function flowRoutes({ system, config, sessionKeys }: AppDeps): Router {
  const router = Router();
  router.post('/v1/flows/set', async (req, res) => {
    const { sent, body } = parseClientBody(FlowSetIn, req.body, config.privacy.piiRules);
    const trace = traceFor(res, body);
    const kb = system.agentContext.knowledgeBase;
    let sessionId: string | null = null;
    let result: FlowSetResult;
    if (body.session_id) {
      sessionId = sessionKeyOr422(sessionKeys, body.session_id, sent.user_id);
      const asked = await setFlow(system.sessionHost, sessionId, {
        flow_key: body.flow_key,
        step_sequence: body.step_sequence ?? null,
        current_step: body.current_step ?? null,
        user_id: body.user_id ?? null,
        client_id: body.client_id ?? null,
        knowledge_base: kb,
        trace,
      });
      result = replyOrThrow(asked, sessionId);
    } else {
      const flow = body.step_sequence?.length
        ? { flow_key: body.flow_key, steps: flowSteps(body.step_sequence) }
        : null;
      result = { flow, ...stepFacts(kb, body.current_step), progress: flowProgress(flow, body.current_step) };
    }
    if (result.flow && body.step_sequence?.length) {
      const commit = await system.recordFlowGraph({
        client_id: body.client_id ?? null,
        flow_key: result.flow.flow_key,
        total_steps: result.flow.steps.length,
        session_id: sessionId,
        user_id: body.user_id ?? null,
        trace,
      });
      if (commit !== 'kept') throw commitRefused(config.cluster.sessionHost.kind === 'restate', commit);
    }
    res.json({
      status: 'ok',
      session_id: sessionId,
      flow_key: result.flow?.flow_key ?? null,
      business_step: result.business_step,
      validation_intent: result.validation_intent,
      progress: result.progress,
    });
  });
  return router;
}

export const flowRoute: RouteModule = { docs: flowRouteDocs, router: flowRoutes };
