import { TokenVerifier } from 'livekit-server-sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Harness } from '../support/harness.js';
import { createHarness } from '../support/harness.js';
import type { LiveKitStandIn } from '../support/livekit-stand-in.js';
import { STAND_IN_KEY, STAND_IN_SECRET, startLiveKitStandIn } from '../support/livekit-stand-in.js';

let lk: LiveKitStandIn;
beforeAll(async () => void (lk = await startLiveKitStandIn()));
beforeEach(() => lk.reset());
afterAll(() => lk.close());

const SESSION = 'hand-1';
const harness = () => createHarness({ env: { STORE: 'sqlite', ...lk.env() } });

/** A running call on pan_details in which the user asked for a person; its id. */
async function waitingCall(h: Harness): Promise<string> {
  const started = await h.http
    .post('/v1/assistant/session/start')
    .send({ session_id: SESSION, user_id: 'hand-user', screen: 'pan_details' })
    .expect(200);
  await h.http
    .post('/v1/assistant/consent')
    .send({ session_id: SESSION, decision: 'given', notice_version: 'default-1', language: 'en' })
    .expect(200);
  await h.http
    .post('/v1/events')
    .send({
      session_id: SESSION,
      event: 'voice_conversation_turn',
      properties: { role: 'user', text: 'I want to talk to a person' },
    })
    .expect(200);
  await h.http
    .post('/v1/events')
    .send({
      session_id: SESSION,
      event: 'handoff_requested',
      screen: 'pan_details',
      properties: { reason: 'the user asked for a person' },
    })
    .expect(200);
  return started.body.assistant_invocation_id as string;
}

describe('a person takes over a call (docs/explanation/handoff.md)', () => {
  it('lists the call as waiting, with its screen and transcript; an operator joins with a token for its room, and it waits no more', async () => {
    const h = harness();
    const callId = await waitingCall(h);
    const waiting = (await h.http.get('/api/handoffs').expect(200)).body.handoffs as Record<string, unknown>[];
    expect(waiting).toHaveLength(1);
    expect(waiting[0]).toMatchObject({
      call_id: callId,
      session_id: SESSION,
      ended_at: null,
      handoff: { reason: 'the user asked for a person', screen: 'pan_details', joined: null },
      transcript: [{ role: 'user', text: 'I want to talk to a person' }],
    });

    const joined = await h.http.post(`/api/calls/${callId}/join`).send({ operator: 'desk 7' }).expect(200);
    expect(joined.body).toMatchObject({
      call_id: callId,
      session_id: SESSION,
      room: 'kyc-room-hand-1',
      media_url: lk.url,
    });
    expect(joined.body.identity).toMatch(/^operator-desk-7-/);
    const grants = await new TokenVerifier(STAND_IN_KEY, STAND_IN_SECRET).verify(joined.body.token as string);
    expect(grants).toMatchObject({
      sub: joined.body.identity,
      video: { roomJoin: true, room: 'kyc-room-hand-1', canPublish: true, canSubscribe: true },
    });
    // An operator's token dispatches no agent.
    expect(grants.roomConfig).toBeUndefined();

    expect((await h.http.get('/api/handoffs').expect(200)).body.handoffs).toEqual([]);
    const call = (await h.http.get(`/api/calls/${callId}`).expect(200)).body;
    expect(call.handoff).toMatchObject({
      reason: 'the user asked for a person',
      joined: { operator: 'desk 7', at: expect.any(String) },
    });
    const items = (await h.http.get(`/api/activity?session_id=${SESSION}&kind=event`).expect(200)).body.items as {
      payload: Record<string, unknown>;
    }[];
    expect(items.at(-1)!.payload).toMatchObject({ event: 'operator_joined', operator: 'desk 7', call_id: callId });
    // A second join is recorded as the first stays: the record names who came first.
    await h.http.post(`/api/calls/${callId}/join`).send({ operator: 'desk 9' }).expect(200);
    expect((await h.http.get(`/api/calls/${callId}`).expect(200)).body.handoff.joined.operator).toBe('desk 7');
  });

  it('refuses a join to a call that ended, that does not exist, or with no operator, changing nothing', async () => {
    const h = harness();
    const callId = await waitingCall(h);
    expect((await h.http.post(`/api/calls/${callId}/join`).send({ operator: '  ' }).expect(422)).body.detail).toMatch(
      /operator/,
    );
    expect(
      (await h.http.post('/api/calls/no-such-call/join').send({ operator: 'desk 7' }).expect(404)).body.detail,
    ).toBe('no call no-such-call');
    await h.http.post('/v1/assistant/session/stop').send({ session_id: SESSION }).expect(200);
    expect((await h.http.post(`/api/calls/${callId}/join`).send({ operator: 'desk 7' }).expect(409)).body.detail).toBe(
      `call ${callId} has ended`,
    );
    expect((await h.http.get(`/api/calls/${callId}`).expect(200)).body.handoff.joined).toBeNull();
    expect((await h.http.get('/api/handoffs').expect(200)).body.handoffs).toEqual([]);
  });

  it('takes operator_joined from no client: a forged one is refused and the call still waits', async () => {
    const h = harness();
    const callId = await waitingCall(h);
    const forged = await h.http
      .post('/v1/events')
      .send({ session_id: SESSION, event: 'operator_joined', properties: { operator: 'nobody' } })
      .expect(422);
    expect(forged.body.detail).toMatch(/operator_joined is recorded by the service/);
    expect(
      ((await h.http.get('/api/handoffs').expect(200)).body.handoffs as { call_id: string }[]).map(
        (call) => call.call_id,
      ),
    ).toEqual([callId]);
  });
});
