import { TokenVerifier } from 'livekit-server-sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Harness } from '../support/harness.js';
import { createHarness, settle } from '../support/harness.js';
import type { Fault, LiveKitStandIn } from '../support/livekit-stand-in.js';
import { STAND_IN_KEY, STAND_IN_SECRET, startLiveKitStandIn } from '../support/livekit-stand-in.js';

let lk: LiveKitStandIn;
beforeAll(async () => {
  lk = await startLiveKitStandIn();
});
afterAll(() => lk.close());
beforeEach(() => lk.reset());

const ROOM = 'kyc-room-s1';
const verifier = new TokenVerifier(STAND_IN_KEY, STAND_IN_SECRET);
/** Budgets low enough that a hung call costs a test little: tight where the hung call is the only one, roomier where other calls must succeed on a loaded machine. */
const SHORT_TIMEOUT = { MEDIA_REQUEST_TIMEOUT_SECONDS: '0.25' };
const SHORTISH_TIMEOUT = { MEDIA_REQUEST_TIMEOUT_SECONDS: '1' };

const harness = (env: Record<string, string> = {}) => createHarness({ env: { ...lk.env(), ...env } });
const start = (h: Harness, body: Record<string, unknown> = {}) =>
  h.http.post('/v1/assistant/session/start').send({ session_id: 's1', screen: 'pan_details', ...body });
const stop = (h: Harness, sessionId = 's1') =>
  h.http.post('/v1/assistant/session/stop').send({ session_id: sessionId });
const activity = async (h: Harness) =>
  (await h.http.get('/api/activity')).body.items as { kind: string; payload: Record<string, unknown> }[];
const callsTo = (method: string) => lk.calls.filter((call) => call.method === method);

/** Waits (event-loop turns, not time) until a request has reached the session actor. */
async function until(check: () => boolean): Promise<void> {
  for (let turn = 0; turn < 500 && !check(); turn += 1) await settle();
  expect(check()).toBe(true);
}
const waitingCommands = (h: Harness) => h.system.sessionHost.snapshot('s1')?.context.voiceWork.waiting.length ?? 0;

describe('start against LiveKit', () => {
  it('creates the room, dispatches the agent once, and returns a participant token the server would accept', async () => {
    const h = harness();
    const res = await start(h, { user_id: 'u1' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      media_url: lk.url,
      livekit_url: lk.url,
      media_room: ROOM,
      livekit_room: ROOM,
      session_id: 's1',
      expires_in_sec: 3600,
      warnings: [],
    });
    expect(lk.methodsCalled()).toEqual(['CreateRoom', 'ListDispatch', 'CreateDispatch']);

    const [createRoom] = callsTo('CreateRoom');
    // Room for the user and the one agent: a third participant is refused by the server itself.
    expect(createRoom!.body).toEqual({ name: ROOM, metadata: '{"session_id":"s1"}', maxParticipants: 2 });
    expect(createRoom!.claims).toMatchObject({ iss: STAND_IN_KEY, video: { roomCreate: true } });
    expect(createRoom!.claims!.exp! - createRoom!.claims!.nbf!).toBe(600);
    expect(createRoom!.requestId).toMatch(/^[0-9a-f-]{36}$/);
    const [dispatch] = callsTo('CreateDispatch');
    expect(dispatch!.body).toEqual({ agentName: 'kyc-voice-agent', room: ROOM, metadata: '{"session_id":"s1"}' });
    expect(dispatch!.claims!.video).toEqual({ roomAdmin: true, room: ROOM });
    expect(callsTo('ListDispatch')[0]!.claims!.video).toEqual({ roomAdmin: true, room: ROOM });

    const claims = await verifier.verify(res.body.token);
    expect(claims).toMatchObject({ sub: 'u1', name: 'kycis-client', iss: STAND_IN_KEY });
    expect(claims.video).toEqual({
      roomJoin: true,
      room: ROOM,
      canPublish: true,
      canSubscribe: true,
      canPublishData: true,
    });
    expect(claims.exp! - claims.nbf!).toBe(3600);
    expect(claims.roomConfig).toBeUndefined();

    expect(lk.rooms.has(ROOM)).toBe(true);
    expect(lk.dispatches).toHaveLength(1);
    const [started] = await activity(h);
    expect(started).toMatchObject({
      kind: 'session_start',
      payload: { room: ROOM, resumed: false, dispatch_id: lk.dispatches[0]!.id, warnings: [] },
    });
    expect((await h.http.get('/api/sessions/s1')).body.voice.dispatch_id).toBe(lk.dispatches[0]!.id);
  });

  it('follows MEDIA_ROOM_PREFIX, VOICE_AGENT_NAME and TOKEN_TTL_SECONDS; identity defaults to user-{session_id}', async () => {
    const h = harness({ MEDIA_ROOM_PREFIX: 'acme', VOICE_AGENT_NAME: 'acme-agent', TOKEN_TTL_SECONDS: '900' });
    const res = await start(h);
    expect(res.body).toMatchObject({ media_room: 'acme-s1', expires_in_sec: 900 });
    expect(lk.dispatches).toEqual([expect.objectContaining({ agent_name: 'acme-agent', room: 'acme-s1' })]);
    const claims = await verifier.verify(res.body.token);
    expect(claims.sub).toBe('user-s1');
    expect(claims.exp! - claims.nbf!).toBe(900);
  });

  it('reports media as ready: integration.media_dispatch and media_ready', async () => {
    const h = harness();
    expect((await h.http.get('/api/features')).body.flags['integration.media_dispatch']).toBe(true);
    expect((await h.http.get('/api/activity')).body.media_ready).toBe(true);
  });
});

describe('never two agents in one room', () => {
  it('repeated starts: same room, a fresh valid token each time, still one dispatch', async () => {
    const h = harness();
    const answers = [];
    for (let i = 0; i < 3; i += 1) answers.push(await start(h));
    for (const res of answers) {
      expect(res.body.media_room).toBe(ROOM);
      expect((await verifier.verify(res.body.token)).video?.room).toBe(ROOM);
    }
    expect(callsTo('CreateDispatch')).toHaveLength(1);
    expect(lk.dispatches).toHaveLength(1);
    const starts = (await activity(h)).filter((item) => item.kind === 'session_start');
    expect(starts.map((item) => item.payload.resumed)).toEqual([false, true, true]);
    expect(new Set(starts.map((item) => item.payload.dispatch_id))).toEqual(new Set([lk.dispatches[0]!.id]));
  });

  it('a start arriving while the first is still starting waits for it, then adopts its dispatch', async () => {
    const h = harness();
    const held = lk.holdNext('CreateRoom');
    const first = start(h, { user_id: 'u1' }).then((res) => res);
    await held.arrived;
    const second = start(h, { user_id: 'u1' }).then((res) => res);
    await until(() => waitingCommands(h) === 1);
    expect(lk.dispatches).toHaveLength(0);
    held.release();

    const [a, b] = await Promise.all([first, second]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body.media_room).toBe(b.body.media_room);
    expect(callsTo('CreateDispatch')).toHaveLength(1);
    expect(lk.dispatches).toHaveLength(1);
    const starts = (await activity(h)).filter((item) => item.kind === 'session_start');
    expect(starts.map((item) => item.payload.resumed)).toEqual([false, true]);
  });

  it('past two waiting commands, a start is refused 503 with Retry-After and changes nothing', async () => {
    const h = harness();
    const held = lk.holdNext('CreateRoom');
    const first = start(h).then((res) => res);
    await held.arrived;
    const waiting = [start(h).then((res) => res), start(h).then((res) => res)];
    await until(() => waitingCommands(h) === 2);
    const refused = await start(h);
    expect(refused.status).toBe(503);
    expect(refused.body.detail).toMatch(/busy/);
    expect(refused.headers['retry-after']).toBe('1');
    held.release();
    expect((await Promise.all([first, ...waiting])).map((res) => res.status)).toEqual([200, 200, 200]);
    expect(lk.dispatches).toHaveLength(1);
    expect((await activity(h)).filter((item) => item.kind === 'session_start')).toHaveLength(3);
  });

  it('a service restarted with no memory adopts the agent already in the room', async () => {
    await start(harness());
    const restarted = harness();
    const res = await start(restarted);
    expect(res.body.warnings).toEqual([]);
    expect(callsTo('CreateDispatch')).toHaveLength(1);
    expect((await restarted.http.get('/api/sessions/s1')).body.voice.dispatch_id).toBe(lk.dispatches[0]!.id);
  });
});

describe('degradation: a media fault never fails a start', () => {
  const serverError: Fault = { status: 500, code: 'internal', msg: 'boom' };

  it.each([
    ['a 5xx', serverError],
    ['a dropped connection', 'drop' as const],
    ['a hang past the timeout', 'hang' as const],
  ])('room creation failing with %s: the token carries the dispatch, no dispatch call', async (_label, fault) => {
    const h = harness(SHORT_TIMEOUT);
    lk.failNext('CreateRoom', fault);
    const res = await start(h);
    expect(res.status).toBe(200);
    expect(res.body.warnings).toEqual(['media_room_create_failed', 'agent_dispatch_via_token']);
    expect(lk.methodsCalled()).toEqual(['CreateRoom']);
    const claims = await verifier.verify(res.body.token);
    expect(claims.video?.room).toBe(ROOM);
    expect(claims.roomConfig?.agents?.map((agent) => [agent.agentName, agent.metadata])).toEqual([
      ['kyc-voice-agent', '{"session_id":"s1"}'],
    ]);
    expect((await h.http.get('/api/sessions/s1')).body.active).toBe(true);
    const [started] = await activity(h);
    expect(started!.payload.warnings).toEqual(['media_room_create_failed', 'agent_dispatch_via_token']);
    expect(h.logs.parsed().some((line) => line.msg === 'media call failed' && line.call === 'createRoom')).toBe(true);
  });

  it('a wrong API secret is a media fault like any other', async () => {
    const h = harness({ LIVEKIT_API_SECRET: 'not-the-secret' });
    const res = await start(h);
    expect(res.status).toBe(200);
    expect(res.body.warnings).toEqual(['media_room_create_failed', 'agent_dispatch_via_token']);
    expect(lk.rooms.size).toBe(0);
  });

  it('dispatch failing with a 5xx: agent_dispatch_failed, session active; a later start dispatches once', async () => {
    const h = harness();
    lk.failNext('CreateDispatch', serverError);
    const res = await start(h);
    expect(res.status).toBe(200);
    expect(res.body.warnings).toEqual(['agent_dispatch_failed']);
    expect(await verifier.verify(res.body.token)).not.toHaveProperty('roomConfig');
    const session = (await h.http.get('/api/sessions/s1')).body;
    expect(session.active).toBe(true);
    expect(session.voice.dispatch_id).toBeNull();
    expect(lk.dispatches).toHaveLength(0);

    const again = await start(h);
    expect(again.body.warnings).toEqual([]);
    expect(lk.methodsCalled()).toEqual([
      'CreateRoom',
      'ListDispatch',
      'CreateDispatch',
      'CreateRoom',
      'ListDispatch',
      'CreateDispatch',
    ]);
    expect(lk.dispatches).toHaveLength(1);
  });

  it('dispatch answered too late: agent_dispatch_failed, and a later start adopts the dispatch that did happen', async () => {
    const h = harness(SHORTISH_TIMEOUT);
    lk.failNext('CreateDispatch', 'hang');
    const res = await start(h);
    expect(res.status).toBe(200);
    expect(res.body.warnings).toEqual(['agent_dispatch_failed']);
    expect(lk.dispatches).toHaveLength(1);

    const again = await start(h);
    expect(again.body.warnings).toEqual([]);
    expect(callsTo('CreateDispatch')).toHaveLength(1);
    expect(lk.dispatches).toHaveLength(1);
    expect((await h.http.get('/api/sessions/s1')).body.voice.dispatch_id).toBe(lk.dispatches[0]!.id);
  });

  it('listing dispatches failing: no dispatch call, since one could make two agents', async () => {
    const h = harness();
    lk.failNext('ListDispatch', { status: 503, code: 'unavailable', msg: 'no response from servers' });
    const res = await start(h);
    expect(res.body.warnings).toEqual(['agent_dispatch_failed']);
    expect(callsTo('CreateDispatch')).toHaveLength(0);
  });

  it('listing failing on a session with a known dispatch keeps that dispatch without a warning', async () => {
    const h = harness();
    await start(h);
    lk.failNext('ListDispatch', 'drop');
    const res = await start(h);
    expect(res.body.warnings).toEqual([]);
    expect(callsTo('CreateDispatch')).toHaveLength(1);
    expect((await h.http.get('/api/sessions/s1')).body.voice.dispatch_id).toBe(lk.dispatches[0]!.id);
  });
});

describe('stop against LiveKit', () => {
  it('deletes the room (and with it the dispatch), then records session_stop and reengagement', async () => {
    const h = harness();
    await start(h);
    const res = await stop(h);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ session_id: 's1', active: false, warnings: [] });
    const [deleteRoom] = callsTo('DeleteRoom');
    expect(deleteRoom!.body).toEqual({ room: ROOM });
    expect(deleteRoom!.claims!.video).toEqual({ roomCreate: true });
    expect(lk.rooms.size).toBe(0);
    expect(lk.dispatches).toHaveLength(0);
    expect((await activity(h)).map((item) => item.kind)).toEqual(['session_start', 'session_stop', 'reengagement']);
    expect((await h.http.get('/api/sessions/s1')).body.voice.dispatch_id).toBeNull();
  });

  it('a room already gone is fine; a delete that fails is a warning, and the session is inactive either way', async () => {
    const h = harness();
    await start(h);
    lk.rooms.clear();
    expect((await stop(h)).body.warnings).toEqual([]);
    await start(h);
    lk.failNext('DeleteRoom', { status: 500, code: 'internal', msg: 'boom' });
    const res = await stop(h);
    expect(res.status).toBe(200);
    expect(res.body.warnings).toEqual(['media_room_delete_failed']);
    expect((await h.http.get('/api/sessions/s1')).body.active).toBe(false);
    const stops = (await activity(h)).filter((item) => item.kind === 'session_stop');
    expect(stops.at(-1)!.payload).toMatchObject({ was_active: true, warnings: ['media_room_delete_failed'] });
  });

  it('a stop arriving while the start is still running waits for it, so no agent is left in a room', async () => {
    const h = harness();
    const held = lk.holdNext('CreateDispatch');
    const starting = start(h).then((res) => res);
    await held.arrived;
    const stopping = stop(h).then((res) => res);
    await until(() => waitingCommands(h) === 1);
    held.release();
    const [started, stopped] = await Promise.all([starting, stopping]);
    expect(started.status).toBe(200);
    expect(stopped.body).toEqual({ session_id: 's1', active: false, warnings: [] });
    expect(lk.methodsCalled().at(-1)).toBe('DeleteRoom');
    expect(lk.rooms.size).toBe(0);
    expect(lk.dispatches).toHaveLength(0);
    expect((await activity(h)).map((item) => item.kind)).toEqual(['session_start', 'session_stop', 'reengagement']);
  });

  it('a start arriving while the stop is still running starts afresh once the room is gone', async () => {
    const h = harness();
    await start(h);
    const held = lk.holdNext('DeleteRoom');
    const stopping = stop(h).then((res) => res);
    await held.arrived;
    const restarting = start(h).then((res) => res);
    await until(() => waitingCommands(h) === 1);
    held.release();
    const [stopped, restarted] = await Promise.all([stopping, restarting]);
    expect(stopped.body.active).toBe(false);
    expect(restarted.body.warnings).toEqual([]);
    expect(lk.rooms.has(ROOM)).toBe(true);
    expect(lk.dispatches).toHaveLength(1);
    const kinds = (await activity(h)).map((item) => [item.kind, item.payload.resumed]);
    expect(kinds).toEqual([
      ['session_start', false],
      ['session_stop', undefined],
      ['reengagement', undefined],
      ['session_start', false],
    ]);
  });
});
