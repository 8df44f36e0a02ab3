import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LiveKitStandIn } from '../test/support/livekit-stand-in.js';
import { startLiveKitStandIn } from '../test/support/livekit-stand-in.js';
import type { SummaryModelStandIn } from '../test/support/summary-model-stand-in.js';
import { startSummaryModelStandIn } from '../test/support/summary-model-stand-in.js';
import { WebhookReceiver } from '../test/support/webhook-receiver.js';
import { clusterCalls, eventually } from './cluster-calls.js';
import { suiteCluster } from './fixtures/suite-cluster.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const PAN = 'ABCPE1234F';

const SUMMARY = 'The user asked why the PAN was refused.';

let liveKit: LiveKitStandIn;
let model: SummaryModelStandIn;
const hooks = new WebhookReceiver(SECRET);
let hooksUrl: string;
beforeAll(async () => {
  liveKit = await startLiveKitStandIn();
  model = await startSummaryModelStandIn({ status: 200, text: SUMMARY });
  hooksUrl = await hooks.start();
});
afterAll(async () => {
  await hooks.stop();
  await model?.close();
  await liveKit?.close();
});

const { cluster, redis } = suiteCluster({
  name: 'cluster-calls',
  processes: 2,
  env: () => ({
    ...liveKit.env(),
    WEBHOOK_URL: hooksUrl,
    WEBHOOK_SECRET: SECRET,
    CALL_SUMMARY_MODEL_BASE_URL: model.url,
    CALL_SUMMARY_MODEL: 'summary-model',
  }),
  startTimeoutMs: 180_000,
});
const { post, get, activityOf } = clusterCalls(cluster);
const atProcess = (index: number) =>
  clusterCalls(cluster, () => `http://127.0.0.1:${cluster().processes[index]!.port}`);
const remove = async (path: string) => {
  const response = await fetch(cluster().url + path, { method: 'DELETE' });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

type Call = {
  call_id: string;
  ended_by: string | null;
  transcript: { role: string; text: string }[];
  report: Record<string, unknown> | null;
  transcript_kept: boolean;
};
type Delivery = {
  id: number;
  message_id: string;
  type: string;
  status: string;
  attempts: number;
  last_error: string | null;
};
const callsOf = async (sessionId: string) => (await get(`/api/sessions/${sessionId}/calls`)).body.calls as Call[];
const deliveries = async (query = '') => (await get(`/api/webhooks/deliveries${query}`)).body.deliveries as Delivery[];
const turn = (sessionId: string, role: 'user' | 'agent', text: string) =>
  post('/v1/events', { session_id: sessionId, event: 'voice_conversation_turn', properties: { role, text } });

/** A consented call on `pan_details` with two turns, started and stopped through both processes; its id. */
async function call(sessionId: string, userId: string): Promise<string> {
  expect(
    (await post('/v1/events', { session_id: sessionId, user_id: userId, event: 'screen_view', screen: 'pan_details' }))
      .status,
  ).toBe(200);
  const started = await atProcess(0).post('/v1/assistant/session/start', {
    session_id: sessionId,
    user_id: userId,
    screen: 'pan_details',
  });
  expect(started.status).toBe(200);
  expect(
    (
      await atProcess(1).post('/v1/assistant/consent', {
        session_id: sessionId,
        decision: 'given',
        notice_version: 'default-1',
        language: 'en',
      })
    ).status,
  ).toBe(200);
  expect((await turn(sessionId, 'agent', 'How can I help?')).status).toBe(200);
  expect((await turn(sessionId, 'user', `my PAN is ${PAN} please help`)).status).toBe(200);
  expect((await atProcess(1).post('/v1/assistant/session/stop', { session_id: sessionId })).status).toBe(200);
  return started.body.assistant_invocation_id as string;
}

describe('calls, consent and webhooks with SESSION_HOST=restate (real Restate server, real redis-server)', () => {
  it('keeps the call in Restate: masked transcript, report, consent, and signed webhooks from durable deliveries', async () => {
    const callId = await call('rec-1', 'rec-user');
    const calls = await eventually(
      () => callsOf('rec-1'),
      (found) => found[0]?.ended_by === 'client',
    );
    expect(calls).toHaveLength(1);
    // The summary the model wrote, in the same invocation that ended the call, from the masked transcript.
    expect(calls[0]).toMatchObject({
      call_id: callId,
      ended_by: 'client',
      transcript_kept: true,
      report: { outcome: 'unresolved', turns: { user: 1, agent: 1 }, summary: SUMMARY, summary_source: 'model' },
    });
    const asked = model.requests
      .map((request) => JSON.stringify(request.body))
      .filter((body) => body.includes('please help'));
    expect(asked).toHaveLength(1);
    expect(asked[0]).not.toContain(PAN);
    expect(calls[0]!.transcript.map((said) => said.role)).toEqual(['agent', 'user']);
    expect(calls[0]!.transcript[1]!.text).toContain('please help');
    expect(JSON.stringify(calls)).not.toContain(PAN);
    // It leaves after TRANSCRIPT_RETENTION_DAYS (30): a delayed call Restate holds until then.
    const expiring = await cluster().restate.query<{ status: string }>(
      "SELECT status FROM sys_invocation WHERE target_service_name = 'KycCalls' AND target_service_key = 'rec-1' AND target_handler_name = 'expire'",
    );
    expect(expiring.map((invocation) => invocation.status)).toEqual(['scheduled']);
    // Found by its id alone, from either process.
    expect((await atProcess(1).get(`/api/calls/${callId}`)).body).toMatchObject({
      call_id: callId,
      session_id: 'rec-1',
    });
    expect((await get('/api/calls/no-such-call')).status).toBe(404);

    await eventually(
      async () => hooks.messages('call.ended').filter((message) => message.data.call_id === callId),
      (found) => found.length === 1,
      20_000,
    );
    const ended = hooks.messages('call.ended').find((message) => message.data.call_id === callId)!;
    expect(ended.data).toMatchObject({
      session_id: 'rec-1',
      ended_by: 'client',
      transcript_kept: true,
      report: { outcome: 'unresolved', summary: SUMMARY, summary_source: 'model' },
    });
    expect(
      hooks.messages('consent.recorded').find((message) => message.data.session_id === 'rec-1')?.data,
    ).toMatchObject({ call_id: callId, decision: 'given' });
    expect(hooks.received.every((message) => !(message.verified instanceof Error))).toBe(true);
    expect(hooks.received.map((message) => message.body).join('')).not.toContain('please help');
    const listed = await eventually(
      () => deliveries('?status=delivered'),
      (found) =>
        found.filter((delivery) => delivery.type === 'call.ended' || delivery.type === 'consent.recorded').length >= 2,
    );
    expect(listed.find((delivery) => delivery.type === 'call.ended')).toMatchObject({
      status: 'delivered',
      attempts: 1,
      message_id: hooks.received.find((m) => m.body.includes(callId) && m.body.includes('call.ended'))!.headers[
        'webhook-id'
      ],
    });

    // The user moves past the step within the window: the outcome becomes resolved, and says so.
    expect(
      (await post('/v1/events', { session_id: 'rec-1', event: 'screen_view', screen: 'aadhaar_otp' })).status,
    ).toBe(200);
    const resolved = await eventually(
      () => callsOf('rec-1'),
      (found) => found[0]?.report?.outcome === 'resolved',
    );
    expect(resolved[0]!.report).toMatchObject({
      outcome: 'resolved',
      reason: 'moved_past_step_after_call',
      outcome_open_until: null,
    });
    await eventually(
      async () => hooks.messages('call.outcome_updated').filter((message) => message.data.call_id === callId),
      (found) => found.length === 1,
      20_000,
    );
  });

  it('without consent keeps no words, and a handoff asked for marks the call and is announced', async () => {
    await post('/v1/events', { session_id: 'rec-2', user_id: 'rec-user-2', event: 'screen_view', screen: 'selfie' });
    expect(
      (await post('/v1/assistant/session/start', { session_id: 'rec-2', user_id: 'rec-user-2', screen: 'selfie' }))
        .status,
    ).toBe(200);
    await turn('rec-2', 'user', 'words not to keep');
    await post('/v1/events', {
      session_id: 'rec-2',
      event: 'handoff_requested',
      properties: { reason: 'asked for a person' },
    });
    await post('/v1/assistant/session/stop', { session_id: 'rec-2' });
    const [made] = await eventually(
      () => callsOf('rec-2'),
      (found) => found[0]?.ended_by === 'client',
    );
    expect(made).toMatchObject({ transcript_kept: false, transcript: [], report: { outcome: 'handoff' } });
    await eventually(
      async () => hooks.messages('handoff.requested').filter((message) => message.data.session_id === 'rec-2'),
      (found) => found.length === 1,
      20_000,
    );
  });

  it('queues a call whose user asked for a person until an operator joins it from either process', async () => {
    await post('/v1/events', { session_id: 'hand-c', user_id: 'hand-user', event: 'screen_view', screen: 'selfie' });
    const started = await post('/v1/assistant/session/start', {
      session_id: 'hand-c',
      user_id: 'hand-user',
      screen: 'selfie',
    });
    const callId = started.body.assistant_invocation_id as string;
    await post('/v1/events', {
      session_id: 'hand-c',
      event: 'handoff_requested',
      screen: 'selfie',
      properties: { reason: 'asked for a person' },
    });
    const waiting = await eventually(
      async () => (await atProcess(1).get('/api/handoffs')).body.handoffs as Call[],
      (found) => found.some((call) => call.call_id === callId),
    );
    expect(waiting.find((call) => call.call_id === callId)).toMatchObject({
      session_id: 'hand-c',
      handoff: { reason: 'asked for a person', screen: 'selfie', joined: null },
    });
    const joined = await atProcess(0).post(`/api/calls/${callId}/join`, { operator: 'desk 3' });
    expect(joined.status).toBe(200);
    expect(joined.body).toMatchObject({
      call_id: callId,
      room: 'kyc-room-hand-c',
      identity: expect.stringMatching(/^operator-desk-3-/),
    });
    await eventually(
      async () => (await atProcess(1).get('/api/handoffs')).body.handoffs as Call[],
      (found) => !found.some((call) => call.call_id === callId),
    );
    const [call] = await callsOf('hand-c');
    expect((call as unknown as { handoff: { joined: { operator: string } } }).handoff.joined.operator).toBe('desk 3');
    await post('/v1/assistant/session/stop', { session_id: 'hand-c' });
    expect((await atProcess(1).post(`/api/calls/${callId}/join`, { operator: 'desk 3' })).status).toBe(409);
  });

  it('a handoff nobody took: the call back owed is announced, and recommended at once when the call ends', async () => {
    await post('/v1/events', { session_id: 'back-c', event: 'screen_view', screen: 'selfie' });
    const started = await atProcess(0).post('/v1/assistant/session/start', { session_id: 'back-c', screen: 'selfie' });
    await atProcess(1).post('/v1/events', {
      session_id: 'back-c',
      event: 'handoff_requested',
      screen: 'selfie',
      properties: { reason: 'asked for a person' },
    });
    await atProcess(0).post('/v1/events', {
      session_id: 'back-c',
      event: 'handoff_unanswered',
      properties: { waited_seconds: 120 },
    });
    const announced = await eventually(
      async () => hooks.messages('handoff.unanswered').filter((message) => message.data.session_id === 'back-c'),
      (found) => found.length > 0,
    );
    expect(announced[0]!.data).toMatchObject({
      call_id: started.body.assistant_invocation_id,
      reason: 'asked for a person',
      screen: 'selfie',
    });
    await atProcess(1).post('/v1/assistant/session/stop', { session_id: 'back-c' });
    expect((await atProcess(0).get('/api/reengagement/back-c')).body).toMatchObject({
      recommended: true,
      reason: 'handoff_unanswered',
    });
  });

  it('an agent whose presence connection closed on one process and was not opened again is taken out of the room, and the call is taken over', async () => {
    const room = 'kyc-room-pres-c';
    await post('/v1/events', { session_id: 'pres-c', event: 'screen_view', screen: 'selfie' });
    expect(
      (await atProcess(0).post('/v1/assistant/session/start', { session_id: 'pres-c', screen: 'selfie' })).status,
    ).toBe(200);
    expect((await atProcess(1).get('/v1/assistant/context/pres-c')).status).toBe(200);
    const [dead] = (liveKit.participants.get(room) ?? []).map((participant) => participant.identity);
    expect(dead).toMatch(/^agent-/);
    const abort = new AbortController();
    const response = await fetch(
      `http://127.0.0.1:${cluster().processes[1]!.port}/v1/assistant/presence/pres-c?identity=${dead}`,
      { signal: abort.signal },
    );
    expect(response.status).toBe(200);
    await response.body!.getReader().read();
    // The job's process dies: its connection closes, and nobody opens it again.
    abort.abort();
    const outcomes = await eventually(
      async () => (await activityOf('pres-c', 'voice_agent')).map((item) => item.payload.outcome),
      (found) => found.includes('redispatched'),
    );
    expect(outcomes).toEqual(['agent_left', 'redispatched']);
    const agents = (liveKit.participants.get(room) ?? []).map((participant) => participant.identity);
    expect(agents).toHaveLength(1);
    expect(agents).not.toContain(dead);
    await post('/v1/assistant/session/stop', { session_id: 'pres-c' });
  });

  it("erases a user from Restate's objects and the shared stream, on every process, and records only the counts", async () => {
    await call('era-1', 'erase-me-5');
    await post('/v1/events', { session_id: 'era-2', user_id: 'erase-me-5', event: 'screen_view', screen: 'otp' });
    await post('/v1/events', { session_id: 'era-keep', user_id: 'someone-else', event: 'screen_view', screen: 'otp' });
    await eventually(
      () => callsOf('era-1'),
      (found) => found[0]?.ended_by === 'client',
    );
    await eventually(
      async () => hooks.messages('call.ended').filter((message) => message.data.session_id === 'era-1'),
      (found) => found.length === 1,
      20_000,
    );

    const erased = await remove('/api/users/erase-me-5');
    expect(erased.status).toBe(200);
    expect(erased.body.removed).toMatchObject({
      sessions: 2,
      calls: 1,
      transcript_turns: 2,
      consent_records: 1,
      webhook_deliveries: 2,
    });
    expect((erased.body.removed as { activity_items: number }).activity_items).toBeGreaterThan(5);

    for (const index of [0, 1]) {
      const at = atProcess(index);
      expect((await at.get('/api/sessions/era-1')).status).toBe(404);
      expect((await at.get('/api/sessions/era-2')).status).toBe(404);
      expect((await at.get('/api/sessions/era-1/calls')).body.calls).toEqual([]);
      // Every process drops the erased items from what it holds, not only the one that ran the erasure.
      await eventually(
        () => at.activityOf('era-1'),
        (items) => items.length === 0,
      );
      expect(JSON.stringify((await at.get('/api/activity?limit=1000')).body)).not.toContain('erase-me-5');
    }
    expect((await get('/api/sessions/era-keep')).status).toBe(200);
    expect((await activityOf('era-keep')).length).toBeGreaterThan(0);
    // Nothing of the user in Restate's state or in the stream's entries.
    const state = await cluster().restate.query<{ service_key: string }>(
      "SELECT service_key FROM state WHERE service_key IN ('era-1', 'era-2')",
    );
    expect(state).toEqual([]);
    const client = new Redis(redis().url);
    const entries = JSON.stringify(await client.xrange('{kyc-activity}', '-', '+'));
    client.disconnect();
    expect(entries).not.toContain('erase-me-5');
    expect(entries).not.toContain('"era-1"');
    const announced = await eventually(
      async () => hooks.messages('user.erased').filter((message) => message.data.erasure_id === erased.body.erasure_id),
      (found) => found.length === 1,
      20_000,
    );
    expect(JSON.stringify(announced)).not.toContain('erase-me-5');
    expect(
      (await deliveries()).some(
        (delivery) => delivery.type === 'call.ended' && JSON.stringify(delivery).includes('era-1'),
      ),
    ).toBe(false);
  });

  it('a receiver that is down gets the delivery later, though the process that queued it was killed; a retry sends it again', async () => {
    const port = hooks.port;
    await hooks.stop();
    await call('down-1', 'down-user');
    const pending = await eventually(
      () =>
        atProcess(1)
          .get('/api/webhooks/deliveries?status=pending')
          .then((answer) => answer.body.deliveries as Delivery[]),
      (found) => found.some((delivery) => delivery.type === 'call.ended' && delivery.attempts >= 1),
      20_000,
    );
    expect(pending.find((delivery) => delivery.type === 'call.ended')!.last_error).toMatch(/not delivered/);
    await cluster().processes[0]!.kill('SIGKILL');
    await hooks.start(port);
    const delivered = await eventually(
      () =>
        atProcess(1)
          .get('/api/webhooks/deliveries?status=delivered')
          .then((answer) => answer.body.deliveries as Delivery[]),
      (found) => found.some((delivery) => delivery.type === 'call.ended' && delivery.attempts >= 2),
      40_000,
    );
    const ended = delivered.find((delivery) => delivery.type === 'call.ended' && delivery.attempts >= 2)!;
    expect(hooks.received.filter((message) => message.headers['webhook-id'] === ended.message_id)).toHaveLength(1);

    const retried = await atProcess(1).post(`/api/webhooks/deliveries/${ended.id}/retry`, {});
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ id: ended.id, status: 'pending' });
    await eventually(
      async () => hooks.received.filter((message) => message.headers['webhook-id'] === ended.message_id),
      (found) => found.length === 2,
      20_000,
    );
    expect((await atProcess(1).post('/api/webhooks/deliveries/123/retry', {})).status).toBe(404);
  });
});
