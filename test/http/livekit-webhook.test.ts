import { createHash } from 'node:crypto';
import { AccessToken } from 'livekit-server-sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Harness } from '../support/harness.js';
import { START_TIME, advance, createHarness, settle } from '../support/harness.js';
import type { LiveKitStandIn } from '../support/livekit-stand-in.js';
import { STAND_IN_KEY, STAND_IN_SECRET, startLiveKitStandIn } from '../support/livekit-stand-in.js';

let lk: LiveKitStandIn;
beforeAll(async () => void (lk = await startLiveKitStandIn()));
afterAll(() => lk.close());
beforeEach(() => lk.reset());

const ROOM = 'kyc-room-s1';
/** ParticipantInfo.Kind.AGENT of LiveKit's protocol, as its webhooks say it. */
const AGENT = 4;
const harness = () => createHarness({ env: { STORE: 'sqlite', API_KEY: 'ops-key', ...lk.env() } });
const agentItems = async (h: Harness) =>
  (
    (await h.http.get('/api/activity?kind=voice_agent').set('x-api-key', 'ops-key')).body.items as {
      timestamp: string;
      payload: Record<string, unknown>;
    }[]
  ).map((item) => ({
    at: item.timestamp,
    outcome: item.payload.outcome,
  }));

/** A webhook as livekit-server sends one: JSON, and a token over its SHA-256 signed with the API key's secret. */
async function webhook(h: Harness, event: Record<string, unknown>, status: number, secret = STAND_IN_SECRET) {
  const body = JSON.stringify({ id: 'EV_1', createdAt: String(Math.floor(Date.now() / 1000)), ...event });
  const token = new AccessToken(STAND_IN_KEY, secret);
  token.sha256 = createHash('sha256').update(body).digest('base64');
  return h.http
    .post('/v1/livekit/webhook')
    .set('content-type', 'application/webhook+json')
    .set('authorization', await token.toJwt())
    .send(body)
    .expect(status);
}

/** Lets the media calls the command started finish (their replies are real HTTP). */
async function settled(): Promise<void> {
  for (let round = 0; round < 20; round += 1) {
    for (let turn = 0; turn < 40; turn += 1) await settle();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("the media server's webhook (POST /v1/livekit/webhook)", () => {
  it("an agent that left makes the call check its room at once, not at its next room check: dispatched anew at the webhook's time", async () => {
    const h = harness();
    await h.http
      .post('/v1/assistant/session/start')
      .set('x-api-key', 'ops-key')
      .send({ session_id: 's1', screen: 'pan_details' })
      .expect(200);
    await h.http.get('/v1/assistant/context/s1').set('x-api-key', 'ops-key').expect(200);
    advance(h.clock, 5_000);
    lk.agentsLeave(ROOM);
    // No X-API-Key: the media server's signature is the credential.
    const taken = await webhook(
      h,
      { event: 'participant_left', room: { name: ROOM }, participant: { identity: 'agent-AJ_1', kind: AGENT } },
      200,
    );
    expect(taken.body).toEqual({ event: 'participant_left', checked: true });
    await settled();
    expect(await agentItems(h)).toEqual([
      { at: new Date(START_TIME + 5_000).toISOString(), outcome: 'agent_left' },
      { at: new Date(START_TIME + 5_000).toISOString(), outcome: 'redispatched' },
    ]);
  });

  it('an agent that left for an operator (AGENT_ON_OPERATOR=leave) is not replaced while the operator is in the room; once they leave too, it is', async () => {
    const h = harness();
    await h.http
      .post('/v1/assistant/session/start')
      .set('x-api-key', 'ops-key')
      .send({ session_id: 's1', screen: 'pan_details' })
      .expect(200);
    await h.http.get('/v1/assistant/context/s1').set('x-api-key', 'ops-key').expect(200);
    lk.participants.set(ROOM, [
      ...(lk.participants.get(ROOM) ?? []),
      { sid: 'PA_op', identity: 'operator-asha-1a2b3c4d', kind: 'STANDARD' },
    ]);
    lk.agentsLeave(ROOM);
    const agentLeft = {
      event: 'participant_left',
      room: { name: ROOM },
      participant: { identity: 'agent-AJ_1', kind: AGENT },
    };
    expect((await webhook(h, agentLeft, 200)).body).toEqual({ event: 'participant_left', checked: true });
    await settled();
    expect(await agentItems(h)).toEqual([]);
    advance(h.clock, 5_000);
    lk.participants.set(
      ROOM,
      (lk.participants.get(ROOM) ?? []).filter((participant) => !participant.identity.startsWith('operator-')),
    );
    // An operator's leaving is not a webhook the service acts on: the next room check finds nobody serving the call.
    advance(h.clock, h.config.voice.roomCheckSeconds * 1000);
    await settled();
    expect((await agentItems(h)).map((item) => item.outcome)).toEqual(['agent_left', 'redispatched']);
  });

  it('takes and ignores what concerns no call: a user leaving, another room, a room of no session', async () => {
    const h = harness();
    await h.http
      .post('/v1/assistant/session/start')
      .set('x-api-key', 'ops-key')
      .send({ session_id: 's1', screen: 'pan_details' })
      .expect(200);
    for (const event of [
      { event: 'participant_left', room: { name: ROOM }, participant: { identity: 'user-s1', kind: 0 } },
      { event: 'participant_left', room: { name: 'another-room' }, participant: { identity: 'agent-1', kind: AGENT } },
      { event: 'room_finished', room: { name: 'kyc-room-unknown' } },
      { event: 'track_published', room: { name: ROOM } },
    ]) {
      expect((await webhook(h, event, 200)).body).toEqual({ event: event.event, checked: false });
    }
    await settled();
    expect(await agentItems(h)).toEqual([]);
  });

  it('refuses what the media server did not sign, changing nothing', async () => {
    const h = harness();
    await h.http
      .post('/v1/assistant/session/start')
      .set('x-api-key', 'ops-key')
      .send({ session_id: 's1', screen: 'pan_details' })
      .expect(200);
    await h.http.get('/v1/assistant/context/s1').set('x-api-key', 'ops-key').expect(200);
    lk.agentsLeave(ROOM);
    const event = {
      event: 'participant_left',
      room: { name: ROOM },
      participant: { identity: 'agent-1', kind: AGENT },
    };
    const unsigned = await h.http
      .post('/v1/livekit/webhook')
      .set('content-type', 'application/webhook+json')
      .send(JSON.stringify(event))
      .expect(401);
    expect(unsigned.body.detail).toMatch(/not signed by the media server/);
    expect((await webhook(h, event, 401, 'another-secret')).body.detail).toMatch(/not signed/);
    // A token over another body.
    const token = new AccessToken(STAND_IN_KEY, STAND_IN_SECRET);
    token.sha256 = createHash('sha256').update('{}').digest('base64');
    await h.http
      .post('/v1/livekit/webhook')
      .set('content-type', 'application/webhook+json')
      .set('authorization', await token.toJwt())
      .send(JSON.stringify(event))
      .expect(401);
    await settled();
    expect(await agentItems(h)).toEqual([]);
  });
});
