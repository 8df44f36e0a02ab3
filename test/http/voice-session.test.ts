import { describe, expect, it } from 'vitest';
import { RAW_AADHAAR, RAW_PAN, RAW_PHONE, SESSION, clientJourney } from '../fixtures/client-events.js';
import type { Harness } from '../support/harness.js';
import { START_TIME, advance, createHarness, settle } from '../support/harness.js';

const start = (h: Harness, body: Record<string, unknown>) => h.http.post('/v1/assistant/session/start').send(body);
const stop = (h: Harness, body: Record<string, unknown>) => h.http.post('/v1/assistant/session/stop').send(body);
const items = async (h: Harness) =>
  (await h.http.get('/api/activity?limit=1000')).body.items as {
    kind: string;
    user_id: string | null;
    payload: Record<string, unknown>;
    trace: { trace_id: string; request_id: string };
  }[];
const HOUR = 3_600_000;
const MINUTE = 60_000;

describe('POST /v1/assistant/session/start without media credentials (placeholder)', () => {
  it('creates the session, makes it active and answers every field clients read, with a placeholder token', async () => {
    const h = createHarness();
    const res = await start(h, { session_id: 's1', user_id: 'u1', screen: 'pan_details' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      token: expect.stringMatching(/^placeholder\.[A-Za-z0-9_-]+$/),
      media_url: '',
      media_room: 'kyc-room-s1',
      expires_in_sec: 3600,
      session_id: 's1',
      livekit_url: '',
      livekit_room: 'kyc-room-s1',
      warnings: ['media_not_configured'],
      assistant_invocation_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(res.body.token.split('.')).toHaveLength(2);
    const session = (await h.http.get('/api/sessions/s1')).body;
    expect(session).toMatchObject({ active: true, user_id: 'u1', screen: 'pan_details', state: { voice: 'active' } });
    expect(session.voice).toEqual({
      room: 'kyc-room-s1',
      dispatch_id: null,
      started_at: new Date(START_TIME).toISOString(),
      stopped_at: null,
    });
  });

  it('warns missing_screen_context when neither the body nor the session knows the screen, in the response and the activity', async () => {
    const h = createHarness();
    const res = await start(h, { session_id: 's1', screen: '' });
    expect(res.body.warnings).toEqual(['missing_screen_context', 'media_not_configured']);
    const [started] = await items(h);
    expect(started).toMatchObject({
      kind: 'session_start',
      payload: { warnings: ['missing_screen_context', 'media_not_configured'], screen: null },
    });
  });

  it('uses the screen the session already holds, and a screen in the body updates it', async () => {
    const h = createHarness();
    await h.http.post('/v1/events').send({ session_id: 's1', event: 'screen_schema_lazy', screen: 'phone_otp' });
    expect((await start(h, { session_id: 's1' })).body.warnings).toEqual(['media_not_configured']);
    await start(h, { session_id: 's1', screen: 'selfie_capture' });
    expect((await h.http.get('/api/sessions/s1')).body.screen).toBe('selfie_capture');
  });

  it('is idempotent on an active session: a fresh token, the same room, session_start resumed', async () => {
    const h = createHarness();
    const first = await start(h, { session_id: 's1', screen: 'pan_details' });
    const second = await start(h, { session_id: 's1' });
    expect(second.status).toBe(200);
    expect(second.body.media_room).toBe(first.body.media_room);
    expect(second.body.token).not.toBe(first.body.token);
    const starts = (await items(h)).filter((item) => item.kind === 'session_start');
    expect(starts.map((item) => item.payload.resumed)).toEqual([false, true]);
  });

  it('refuses bad input with 422 naming the field, creating nothing', async () => {
    const h = createHarness();
    for (const [body, field] of [
      [{}, /^session_id: is required/],
      [{ session_id: 'a b' }, /^session_id: must be 1-128 characters/],
      [{ session_id: 's1', screen: 7 }, /^screen: must be a string/],
      [{ session_id: 's1', user_id: 'u'.repeat(300) }, /^user_id: must be at most 256 characters/],
    ] as const) {
      const res = await start(h, body);
      expect(res.status).toBe(422);
      expect(res.body.detail).toMatch(field);
    }
    expect(h.system.sessionHost.size).toBe(0);
    expect(await items(h)).toEqual([]);
  });

  it('takes the activity trace from the body, then the headers', async () => {
    const h = createHarness();
    await start(h, { session_id: 's1', trace_id: 'trace-from-body' });
    await h.http.post('/v1/assistant/session/stop').set('X-Request-ID', 'stop-req-1').send({ session_id: 's1' });
    const [started, stopped] = await items(h);
    expect(started!.trace.trace_id).toBe('trace-from-body');
    expect(stopped!.trace.request_id).toBe('stop-req-1');
  });
});

describe('POST /v1/assistant/session/stop', () => {
  it('404 for an unknown session, creating nothing', async () => {
    const h = createHarness();
    const res = await stop(h, { session_id: 'nobody' });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'session nobody not found' });
    expect(h.system.sessionHost.has('nobody')).toBe(false);
  });

  it('on an active session: inactive, then session_stop and reengagement, in that order', async () => {
    const h = createHarness();
    await start(h, { session_id: 's1', user_id: 'u1', screen: 'pan_details' });
    h.clock.increment(90_000);
    const res = await stop(h, { session_id: 's1' });
    expect(res.body).toEqual({ session_id: 's1', active: false, warnings: [] });
    const session = (await h.http.get('/api/sessions/s1')).body;
    expect(session.active).toBe(false);
    expect(session.voice.stopped_at).toBe(new Date(START_TIME + 90_000).toISOString());
    const [, stopped, reengagement] = await items(h);
    expect(stopped).toMatchObject({
      kind: 'session_stop',
      user_id: 'u1',
      payload: { room: 'kyc-room-s1', was_active: true },
    });
    expect(reengagement).toMatchObject({
      kind: 'reengagement',
      payload: {
        recommended: false,
        channel: 'voice',
        reason: 'user_active',
        inactivity_seconds: 90,
        source: 'session_stop',
      },
    });
  });

  it('on an inactive session: 200 active:false, session_stop with was_active false, no reengagement', async () => {
    const h = createHarness();
    await h.http.post('/v1/events').send({ session_id: 's1', event: 'identity' });
    const res = await stop(h, { session_id: 's1' });
    expect(res.body).toEqual({ session_id: 's1', active: false, warnings: [] });
    const kinds = (await items(h)).map((item) => [item.kind, item.payload.was_active]);
    expect(kinds).toEqual([
      ['event', undefined],
      ['session_stop', false],
    ]);
  });

  it('refuses a body without session_id', async () => {
    const h = createHarness();
    const res = await stop(h, { user_id: 'u1' });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/^session_id: is required/);
  });
});

describe('a voice session within the rest of the session', () => {
  it('keeps the activity order of docs/reference/events.md across a whole journey', async () => {
    const h = createHarness();
    for (const event of clientJourney(SESSION)) await h.http.post('/v1/events').send(event);
    await start(h, { session_id: SESSION, user_id: 'u1', screen: 'pan_details' });
    await h.http
      .post('/v1/events')
      .send({ session_id: SESSION, event: 'voice_conversation_turn', properties: { role: 'agent' } });
    const fetched = await h.http.get(`/v1/assistant/context/${SESSION}`);
    expect(fetched.body.context.voice_active).toBe(true);
    await stop(h, { session_id: SESSION });
    expect((await h.http.get(`/v1/assistant/context/${SESSION}`)).body.context.voice_active).toBe(false);
    const kinds = (await items(h)).map((item) => (item.kind === 'event' ? String(item.payload.event) : item.kind));
    expect(kinds.slice(-6, -1)).toEqual([
      'session_start',
      'voice_conversation_turn',
      'voice_agent_context_fetch',
      'session_stop',
      'reengagement',
    ]);
    expect(kinds.indexOf('identity')).toBeLessThan(kinds.indexOf('session_start'));
  });

  it('events ingested during a voice session leave it active', async () => {
    const h = createHarness();
    await start(h, { session_id: 's1', screen: 'pan_details' });
    await h.http
      .post('/v1/events')
      .send({ session_id: 's1', event: 'component_input', component_id: 'pan_field', hint: 'ABCDE1234F' });
    await h.http.post('/v1/events').send({ session_id: 's1', event: 'voice_conversation_turn' });
    expect((await h.http.get('/api/sessions/s1')).body.state.voice).toBe('active');
  });

  it('an active voice session the agent is fetching context for is never evicted for idleness; once stopped it is', async () => {
    const h = createHarness({ env: { SESSION_IDLE_TTL_SECONDS: '3600' } });
    await start(h, { session_id: 's1', screen: 'pan_details' });
    for (let minutes = 0; minutes < 120; minutes += 2) {
      advance(h.clock, 2 * MINUTE, 60_000);
      expect((await h.http.get('/v1/assistant/context/s1')).status).toBe(200);
    }
    await settle();
    expect(h.system.sessionHost.has('s1')).toBe(true);
    expect((await h.http.get('/api/sessions/s1')).body.state.voice).toBe('active');
    await stop(h, { session_id: 's1' });
    advance(h.clock, HOUR - 60_000, 60_000);
    await settle();
    expect(h.system.sessionHost.has('s1')).toBe(true);
    advance(h.clock, 60_000, 60_000);
    await settle();
    expect(h.system.sessionHost.has('s1')).toBe(false);
  });

  it('never puts a token or a raw input value in a voice response, the activity or a log line', async () => {
    const h = createHarness({ env: { LOG_LEVEL: 'trace' } });
    for (const event of clientJourney('s1')) await h.http.post('/v1/events').send(event);
    const started = await start(h, { session_id: 's1', screen: 'pan_details' });
    const bodies = [
      JSON.stringify(started.body),
      (await stop(h, { session_id: 's1' })).text,
      (await h.http.get('/api/reengagement/s1')).text,
      (await h.http.get('/api/activity?limit=1000')).text,
      (await h.http.get('/api/sessions/s1')).text,
    ];
    expect(h.logs.text).not.toContain(started.body.token);
    expect(bodies.slice(1).join('\n')).not.toContain(started.body.token);
    for (const raw of [RAW_PAN, RAW_PHONE, RAW_AADHAAR])
      expect([...bodies, h.logs.text].join('\n'), raw).not.toContain(raw);
  });

  it('documents the voice routes in the OpenAPI document', async () => {
    const h = createHarness();
    const doc = (await h.http.get('/openapi.json')).body;
    expect(doc.paths['/v1/assistant/session/start'].post.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/AssistantStartIn',
    });
    expect(doc.components.schemas.AssistantStartOut.required).toEqual(
      expect.arrayContaining([
        'token',
        'media_url',
        'media_room',
        'expires_in_sec',
        'session_id',
        'livekit_url',
        'livekit_room',
        'warnings',
      ]),
    );
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/v1/assistant/session/stop', '/api/reengagement/{session_id}']),
    );
  });
});

describe('a voice session nobody stops ends once nothing is heard of the call (VOICE_SILENCE_TIMEOUT_SECONDS)', () => {
  type Item = { kind: string; timestamp: string; payload: Record<string, unknown> };
  const voiceItems = async (h: Harness) =>
    ((await h.http.get('/api/activity?session_id=s1&limit=100')).body.items as Item[]).filter(
      (item) => item.kind === 'session_stop' || item.kind === 'reengagement',
    );
  const voiceState = async (h: Harness) => (await h.http.get('/api/sessions/s1')).body.state.voice as string;

  it('ends the call as a stop would, at the timeout after the start, not a millisecond before', async () => {
    const h = createHarness({ env: { VOICE_SILENCE_TIMEOUT_SECONDS: '300' } });
    await start(h, { session_id: 's1', user_id: 'u1', screen: 'pan_details' });
    advance(h.clock, 300_000 - 1, 60_000);
    await settle();
    expect(await voiceState(h)).toBe('active');
    advance(h.clock, 1);
    await settle();
    expect(await voiceState(h)).toBe('inactive');
    expect(await voiceItems(h)).toMatchObject([
      {
        kind: 'session_stop',
        timestamp: new Date(START_TIME + 300_000).toISOString(),
        payload: { room: 'kyc-room-s1', was_active: true, warnings: [], ended_by: 'silence', silent_seconds: 300 },
      },
      { kind: 'reengagement', payload: { source: 'session_stop' } },
    ]);
    // Triggers are no longer held back as assistant_active, and the client's late stop is a no-op.
    const trigger = await h.http
      .post('/v1/assistant/trigger/evaluate')
      .send({ session_id: 's1', signals: { errors: ['a', 'b'] } });
    expect(trigger.body).toMatchObject({ trigger: true, reason: 'repeated_errors' });
    expect((await stop(h, { session_id: 's1' })).body).toEqual({ session_id: 's1', active: false, warnings: [] });
    expect((await voiceItems(h)).at(-1)).toMatchObject({ kind: 'session_stop', payload: { was_active: false } });
  });

  it("the agent's context fetches, its telemetry and a resume each count as the call being alive", async () => {
    const h = createHarness({ env: { VOICE_SILENCE_TIMEOUT_SECONDS: '300' } });
    await start(h, { session_id: 's1', user_id: 'u1', screen: 'pan_details' });
    advance(h.clock, 4 * MINUTE);
    await h.http.get('/v1/assistant/context/s1');
    advance(h.clock, 4 * MINUTE);
    await h.http
      .post('/v1/events')
      .send({ session_id: 's1', event: 'voice_conversation_turn', properties: { role: 'agent' } });
    advance(h.clock, 4 * MINUTE);
    await start(h, { session_id: 's1', user_id: 'u1' });
    advance(h.clock, 5 * MINUTE - 1);
    await settle();
    expect(await voiceState(h)).toBe('active');
    expect(await voiceItems(h)).toEqual([]);
    // The user's own events say nothing of the call: they do not keep it alive.
    await h.http.post('/v1/events').send({ session_id: 's1', event: 'screen_state', screen: 'pan_details' });
    advance(h.clock, 1);
    await settle();
    expect(await voiceState(h)).toBe('inactive');
    expect((await voiceItems(h))[0]).toMatchObject({
      timestamp: new Date(START_TIME + 17 * MINUTE).toISOString(),
      payload: { ended_by: 'silence', silent_seconds: 300 },
    });
  });

  it('a silent call ended leaves the session to be evicted like any other', async () => {
    const h = createHarness({ env: { VOICE_SILENCE_TIMEOUT_SECONDS: '300', SESSION_IDLE_TTL_SECONDS: '3600' } });
    await start(h, { session_id: 's1', screen: 'pan_details' });
    advance(h.clock, 2 * HOUR, 60_000);
    await settle();
    expect(h.system.sessionHost.has('s1')).toBe(false);
  });

  it('refuses a timeout shorter than two context refreshes, naming both settings', () => {
    expect(() =>
      createHarness({ env: { VOICE_SILENCE_TIMEOUT_SECONDS: '100', VOICE_CONTEXT_REFRESH_SECONDS: '60' } }),
    ).toThrow(/VOICE_SILENCE_TIMEOUT_SECONDS \(100\) must be at least twice VOICE_CONTEXT_REFRESH_SECONDS \(60\)/);
  });
});
