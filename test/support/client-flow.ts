import { expect } from 'vitest';
import type { ClientFlow } from '../fixtures/client-flows.js';
import type { Harness } from './harness.js';

export interface FlowRun {
  /** The answer to the flow's trigger evaluation, when it had one. */
  decision: Record<string, unknown> | undefined;
  /** The answer to the start, when the client started. */
  started: Record<string, unknown> | undefined;
  stopped: Record<string, unknown> | undefined;
  /** Clock time of the flow's last request: its session's idle TTL runs from there. */
  lastAt: number;
}

/**
 * Plays a client flow through the HTTP API as the app and the agent would, on the harness's
 * simulated clock. Like a deployed client, it starts after an evaluation only when the answer says
 * `trigger: true` and `action: "start_voice_agent"`.
 */
export async function runFlow(h: Harness, flow: ClientFlow): Promise<FlowRun> {
  const run: FlowRun = { decision: undefined, started: undefined, stopped: undefined, lastAt: h.clock.now() };
  const ids = { session_id: flow.sessionId, user_id: flow.userId };
  const ok = async (request: PromiseLike<{ status: number; body: Record<string, unknown> }>) => {
    const res = await request;
    expect(res.status, `${flow.name}: ${JSON.stringify(res.body)}`).toBe(200);
    run.lastAt = h.clock.now();
    return res.body;
  };
  for (const step of flow.steps) {
    switch (step.do) {
      case 'event':
        await ok(h.http.post('/v1/events').send(step.body));
        break;
      case 'wait':
        h.clock.increment(step.seconds * 1000);
        break;
      case 'evaluate':
        run.decision = await ok(h.http.post('/v1/assistant/trigger/evaluate').send({ ...ids, signals: step.signals }));
        break;
      case 'start':
        if (
          step.mode === 'on_trigger' &&
          !(run.decision?.trigger === true && run.decision.action === 'start_voice_agent')
        )
          break;
        run.started = await ok(h.http.post('/v1/assistant/session/start').send({ ...ids, screen: step.screen }));
        break;
      case 'context':
        await ok(h.http.get(`/v1/assistant/context/${flow.sessionId}`));
        break;
      case 'stop':
        run.stopped = await ok(h.http.post('/v1/assistant/session/stop').send(ids));
        break;
    }
  }
  return run;
}
