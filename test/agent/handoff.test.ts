import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { HANDOFF_LINES, Handoff } from '../../agent/handoff.js';
import { createServiceClient } from '../../src/client/index.js';
import type { RunningServer } from '../../src/http/server.js';
import type { Harness } from '../support/harness.js';
import { createHarness, serve } from '../support/harness.js';
import type { LiveKitStandIn } from '../support/livekit-stand-in.js';
import { startLiveKitStandIn } from '../support/livekit-stand-in.js';

const SESSION = 'agent-hand-1';
let lk: LiveKitStandIn;
const servers: RunningServer[] = [];
beforeAll(async () => void (lk = await startLiveKitStandIn()));
afterAll(() => lk.close());
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close(1000);
});

/** The agent's Handoff against the real service on a socket, with the wait's timer in the test's hand. */
async function agentSide(h: Harness, sessionId = SESSION) {
  const server = await serve(h);
  servers.push(server);
  const said: string[] = [];
  const stepped: Promise<void>[] = [];
  const timers: { run: () => void; ms: number; cleared: boolean }[] = [];
  const handoff = new Handoff({
    client: createServiceClient({ baseUrl: server.url }),
    sessionId,
    timeoutMs: 120_000,
    requestTimeoutMs: 5_000,
    say: (text) => (said.push(text), Promise.resolve()),
    stepBack: (playedOut) => void stepped.push(playedOut),
    log: () => undefined,
    setTimer: (run, ms) => {
      const timer = { run, ms, cleared: false };
      timers.push(timer);
      return { clear: () => (timer.cleared = true) };
    },
  });
  return { handoff, said, stepped, timers };
}

describe("the agent's side of a person taking over (agent/handoff.ts)", () => {
  it('asks the service for a person: the call enters the queue; an operator joining makes it say so and step back, once', async () => {
    const h = createHarness({ env: { STORE: 'sqlite', ...lk.env() } });
    await h.http.post('/v1/assistant/session/start').send({ session_id: SESSION, screen: 'pan_details' }).expect(200);
    const { handoff, said, stepped, timers } = await agentSide(h);

    expect(await handoff.request('the user asked for a person')).toBe(true);
    // A second request while one waits asks nothing more.
    expect(await handoff.request('again')).toBe(true);
    const waiting = (await h.http.get('/api/handoffs').expect(200)).body.handoffs as { handoff: { reason: string } }[];
    expect(waiting.map((call) => call.handoff.reason)).toEqual(['the user asked for a person']);
    expect(timers.map((timer) => timer.ms)).toEqual([120_000]);

    handoff.participantJoined('user-agent-hand-1');
    expect(handoff.steppedBack).toBe(false);
    handoff.participantJoined('operator-desk-7-1234abcd');
    handoff.participantJoined('operator-desk-9-1234abcd');
    expect(said).toEqual([HANDOFF_LINES.joining]);
    expect(stepped).toHaveLength(1);
    expect(handoff.steppedBack).toBe(true);
    expect(timers[0]!.cleared).toBe(true);
  });

  it(
    'says nobody is free when no operator joins within the wait, after telling the service: a ' +
      'call back is owed, announced, and recommended at once after the call',
    async () => {
      const h = createHarness({
        env: {
          STORE: 'sqlite',
          WEBHOOK_URL: 'http://127.0.0.1:9/hooks',
          WEBHOOK_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
          ...lk.env(),
        },
      });
      await h.http.post('/v1/assistant/session/start').send({ session_id: SESSION, screen: 'pan_details' }).expect(200);
      const { handoff, said, stepped, timers } = await agentSide(h);
      await handoff.request('cannot be helped');
      timers[0]!.run();
      await vi.waitFor(() => expect(said).toEqual([HANDOFF_LINES.timedOut]));
      expect(stepped).toEqual([]);
      // The call's record says the call back is owed, and a receiver is told.
      const [call] = (await h.http.get(`/api/sessions/${SESSION}/calls`).expect(200)).body.calls as {
        handoff: { unanswered_at: string | null; joined: unknown };
      }[];
      expect(call!.handoff).toMatchObject({ joined: null, unanswered_at: expect.any(String) });
      // Its message's data: test/http/webhooks.test.ts.
      const deliveries = (await h.http.get('/api/webhooks/deliveries').expect(200)).body.deliveries as {
        type: string;
      }[];
      expect(deliveries.map((delivery) => delivery.type).sort()).toEqual(['handoff.requested', 'handoff.unanswered']);
      // Still in the queue while the call runs: an operator may yet take it.
      expect((await h.http.get('/api/handoffs').expect(200)).body.handoffs).toHaveLength(1);
      // The user is active a moment ago, but the call back is owed: recommended at once when the call ends.
      await h.http
        .post('/v1/events')
        .send({ session_id: SESSION, event: 'component_input', screen: 'pan_details', component_id: 'pan' })
        .expect(200);
      await h.http.post('/v1/assistant/session/stop').send({ session_id: SESSION }).expect(200);
      expect((await h.http.get(`/api/reengagement/${SESSION}`).expect(200)).body).toMatchObject({
        recommended: true,
        reason: 'handoff_unanswered',
        channel: 'voice',
      });
    },
  );

  it('an operator who joins after the agent gave up settles the call back owed', async () => {
    const h = createHarness({ env: { STORE: 'sqlite', ...lk.env() } });
    const started = await h.http
      .post('/v1/assistant/session/start')
      .send({ session_id: SESSION, screen: 'pan_details' })
      .expect(200);
    const { handoff, said, timers } = await agentSide(h);
    await handoff.request('cannot be helped');
    timers[0]!.run();
    await vi.waitFor(() => expect(said).toEqual([HANDOFF_LINES.timedOut]));
    await h.http
      .post(`/api/calls/${started.body.assistant_invocation_id}/join`)
      .send({ operator: 'desk-7' })
      .expect(200);
    await h.http.post('/v1/assistant/session/stop').send({ session_id: SESSION }).expect(200);
    expect((await h.http.get(`/api/reengagement/${SESSION}`).expect(200)).body).toMatchObject({
      recommended: false,
      reason: 'user_active',
    });
  });

  it('answers false when the service does not take the request (no such session): the caller says so', async () => {
    const h = createHarness({ env: { STORE: 'sqlite', ...lk.env() } });
    // An event makes its session, so a refusal is the service's own: a session id it cannot take.
    const { handoff, timers } = await agentSide(h, 'bad id');
    expect(await handoff.request('x')).toBe(false);
    expect(timers).toEqual([]);
    expect((await h.http.get('/api/handoffs').expect(200)).body.handoffs).toEqual([]);
  });
});
