import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/http/server.js';
import { createHarness, serve } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { indianForm, leaks } from '../support/identity-values.js';
import { WsClient } from '../support/ws-client.js';

/**
 * The field SDK calls beyond POST /v1/events (the WebSocket control plane, flows, popups,
 * drop-off, the legacy `unknown` session keyed by a phone-number user id) keep no raw identity
 * value either: every read surface, the frames and the logs are searched for it.
 */
const PHONE = '9876543210';
const PAN = 'ABCDE1234F';
const EMAIL = 'jane.doe@example.com';
const RAW = [PHONE, PAN, EMAIL];

const open: { servers: RunningServer[]; clients: WsClient[] } = { servers: [], clients: [] };
afterEach(async () => {
  for (const client of open.clients.splice(0)) client.close();
  for (const server of open.servers.splice(0)) await server.close(100);
});

async function everySurface(h: Harness, sessionIds: string[]): Promise<string> {
  const bodies: string[] = [];
  for (const path of [
    '/api/activity?limit=1000',
    ...sessionIds.flatMap((id) => [
      `/api/sessions/${encodeURIComponent(id)}`,
      `/v1/assistant/context/${encodeURIComponent(id)}`,
    ]),
  ]) {
    const res = await h.http.get(path);
    expect(res.status, path).toBe(200);
    bodies.push(res.text);
  }
  return [...bodies, h.logs.text].join('\n');
}

describe('identity values sent through the field SDK calls', () => {
  it('a legacy unknown session whose user id is a phone number is keyed by a digest, and the number is kept nowhere', async () => {
    const h = createHarness({ env: { LOG_LEVEL: 'trace' } });
    const sent = await h.http.post('/v1/events').send({
      session_id: 'unknown',
      user_id: PHONE,
      event: 'user_enrichment',
      properties: { user_id: PHONE, phone: PHONE },
    });
    expect(sent.status).toBe(200);
    const items = (await h.http.get('/api/activity').query({ kind: 'event' })).body.items as { session_id: string }[];
    const key = items[0]!.session_id;
    expect(key).toMatch(/^unknown:h-[0-9a-f]{24}$/);
    // The same user comes back through the trigger and flow routes: the same session.
    await h.http
      .post('/v1/assistant/trigger/evaluate')
      .send({ session_id: 'UNKNOWN', user_id: PHONE, signals: { screen: 'pan_details' } })
      .expect(200);
    await h.http
      .post('/v1/flows/set')
      .send({
        session_id: 'unknown',
        user_id: PHONE,
        flow_key: 'kyc',
        step_sequence: ['phone_entry', 'pan_details'],
        current_step: 'pan_details',
      })
      .expect(200);
    const keys = new Set(
      ((await h.http.get('/api/activity')).body.items as { session_id: string | null }[]).map(
        (item) => item.session_id,
      ),
    );
    expect([...keys]).toEqual([key]);
    const everything = await everySurface(h, [key]);
    for (const raw of RAW) expect(everything, raw).not.toContain(raw);
  });

  it('flows, popups and drop-off bodies are masked before the session or the log sees them', async () => {
    const h = createHarness({ env: { LOG_LEVEL: 'trace' } });
    const session = 's-bodies';
    await h.http
      .post('/v1/flows/set')
      .send({
        session_id: session,
        user_id: EMAIL,
        flow_key: 'kyc',
        step_sequence: ['pan_details', PAN],
        current_step: PAN,
      })
      .expect(200);
    await h.http
      .post('/v1/assistant/popup/evaluate')
      .send({ session_id: session, user_id: EMAIL, signals: { screen: `pan ${PAN}` }, note: PHONE })
      .expect(200);
    await h.http
      .post('/v1/assistant/evaluate')
      .send({ session_id: session, signals: { errors: [PAN] } })
      .expect(200);
    const registered = await h.http
      .post('/api/dropoff/register')
      .send({ session_id: session, user_id: EMAIL, phone: `+91${PHONE}`, reason: `call ${PHONE}` });
    expect(registered.body).toMatchObject({ has_dialable_phone: true });
    await h.http.post('/api/dropoff/cancel').send({ session_id: session, user_id: EMAIL }).expect(200);
    const everything = await everySurface(h, [session]);
    for (const raw of RAW) expect(everything, raw).not.toContain(raw);
    // The shape survives: the drop-off still knows the last 4 digits it may show.
    expect(everything).toContain('3210');
  });

  it('values as Indian users type and say them, in every field of the trigger, voice, flow, popup and drop-off bodies, are kept nowhere', async () => {
    const h = createHarness({ env: { LOG_LEVEL: 'trace' } });
    const values = fc.sample(indianForm, { numRuns: 16, seed: 4042 });
    const sessions: string[] = [];
    for (const [i, value] of values.entries()) {
      const session = `s-forms-${i}`;
      sessions.push(session);
      const raw = value.raw;
      await h.http
        .post('/v1/assistant/trigger/evaluate')
        .send({
          session_id: session,
          user_id: raw,
          signals: { screen: `pan ${raw}`, errors: ['pan_invalid_format', raw] },
        })
        .expect(200);
      await h.http
        .post('/v1/assistant/session/start')
        .send({ session_id: session, user_id: raw, screen: raw })
        .expect(200);
      await h.http.post('/v1/assistant/session/stop').send({ session_id: session, user_id: raw }).expect(200);
      await h.http
        .post('/v1/flows/set')
        .send({
          session_id: session,
          user_id: raw,
          flow_key: 'kyc',
          step_sequence: ['pan_details', raw],
          current_step: raw,
        })
        .expect(200);
      await h.http
        .post('/v1/assistant/popup/evaluate')
        .send({ session_id: session, user_id: raw, signals: { screen: raw }, note: raw })
        .expect(200);
      // A reason is at most 64 characters: a longer value (an address) is planted everywhere else.
      await h.http
        .post('/api/dropoff/register')
        .send({
          session_id: session,
          user_id: raw,
          phone: '+919876543210',
          reason: raw.length <= 59 ? `call ${raw}` : 'call',
        })
        .expect(200);
    }
    const everything = await everySurface(h, sessions);
    for (const value of values) expect(leaks(everything, value), `${value.kind} ${value.raw}`).toBe(false);
  });

  it('WebSocket frames are masked like bodies, and the connect frame user id never reaches a surface', async () => {
    const h = createHarness({ env: { LOG_LEVEL: 'trace' } });
    const server = await serve(h);
    open.servers.push(server);
    const ws = await WsClient.open(`${server.url.replace('http', 'ws')}/v1/events/ws`);
    open.clients.push(ws);
    ws.send({ type: 'connect', message_id: 'm1', session_id: 'unknown', user_id: PHONE, client_id: 'kycis_demo' });
    const ack = await ws.nextOfType('ack');
    const key = String(ack.session_id);
    expect(key).toMatch(/^unknown:h-/);
    ws.send({
      type: 'control_state',
      message_id: 'c1',
      event: 'validation_failed',
      screen: 'pan_details',
      failure_reason_code: PAN,
      errors: [EMAIL],
      component_id: 'pan_field',
    });
    await ws.nextOfType('ack', (frame) => frame.message_id === 'c1');
    ws.send({
      type: 'trigger_evaluate',
      message_id: 't1',
      user_id: PHONE,
      signals: { screen: 'pan_details', errors: [PAN] },
    });
    await ws.nextOfType('trigger_response');
    const framesText = JSON.stringify(ws.frames);
    const everything = `${await everySurface(h, [key])}\n${framesText}`;
    for (const raw of RAW) expect(everything, raw).not.toContain(raw);
  });

  it(
    'ids sent in headers and the query (X-Request-ID, X-Client-ID, X-SVC-SDK-Version, ' +
      'client_id) are masked (a request id digested) where they are kept, streamed or echoed',
    async () => {
      const h = createHarness({ env: { LOG_LEVEL: 'trace' } });
      const answers: string[] = [];
      const keep = (res: { text: string; headers: Record<string, string> }) =>
        answers.push(res.text, JSON.stringify(res.headers));
      keep(
        await h.http
          .post('/v1/events')
          .set('X-Request-ID', PAN)
          .send({ session_id: 'h1', event: 'screen_state', screen: 'pan_details' })
          .expect(200),
      );
      keep(
        await h.http
          .post('/v1/assistant/evaluate')
          .set('X-Client-ID', PAN)
          .set('X-Request-ID', EMAIL)
          .send({ session_id: 'h1', signals: { time_spent: 30 } })
          .expect(200),
      );
      keep(
        await h.http
          .post('/v1/assistant/popup/evaluate')
          .set('X-Client-ID', PHONE)
          .send({ session_id: 'h1' })
          .expect(200),
      );
      keep(
        await h.http
          .post('/v1/assistant/trigger/evaluate')
          .set('X-Client-ID', EMAIL)
          .send({ session_id: 'h1', signals: {} })
          .expect(200),
      );
      keep(await h.http.get('/v1/sdk/config').set('X-Client-ID', PAN).set('X-SVC-SDK-Version', EMAIL).expect(200));
      keep(await h.http.get('/v1/sdk/config').query({ client_id: PHONE }).expect(200));
      // An ordinary id is still echoed as sent.
      expect((await h.http.get('/health').set('X-Request-ID', 'req-42')).headers['x-request-id']).toBe('req-42');
      const everything = `${await everySurface(h, ['h1'])}\n${answers.join('\n')}`;
      for (const raw of RAW) expect(everything, raw).not.toContain(raw);
      // The items carry a request id as its digest, the one echoed, so a trace can be followed; a tenant is masked.
      const items = (await h.http.get('/api/activity').query({ session_id: 'h1' })).body.items as {
        trace: { request_id: string };
        payload: { client_id?: string };
      }[];
      expect(items[0]!.trace.request_id).toMatch(/^h-[0-9a-f]{24}$/);
      expect((await h.http.get('/health').set('X-Request-ID', PAN)).headers['x-request-id']).toBe(
        items[0]!.trace.request_id,
      );
      expect(items.map((item) => item.payload.client_id).filter(Boolean)).toContain('**********');
    },
  );

  it('a session id that reads as an identity value is keyed by its digest wherever it arrives, and every call still finds the session', async () => {
    const h = createHarness({ env: { LOG_LEVEL: 'trace' } });
    const server = await serve(h);
    open.servers.push(server);
    await h.http
      .post('/v1/events')
      .send({ session_id: PHONE, event: 'screen_state', screen: 'pan_details' })
      .expect(200);
    const trigger = await h.http
      .post('/v1/assistant/trigger/evaluate')
      .send({ session_id: PHONE, signals: { errors: ['a', 'b'] } })
      .expect(200);
    expect(trigger.body.trigger).toBe(true);
    const start = await h.http
      .post('/v1/assistant/session/start')
      .send({ session_id: PHONE, user_id: 'u1' })
      .expect(200);
    const key = String(start.body.session_id);
    expect(key).toMatch(/^h-[0-9a-f]{24}$/);
    // The path and the query take the id as the SDK knows it.
    expect((await h.http.get(`/v1/assistant/context/${PHONE}`)).body).toMatchObject({
      session_id: key,
      current_screen: 'pan_details',
    });
    expect((await h.http.get(`/api/sessions/${PHONE}`)).body.state.voice).toBe('active');
    expect((await h.http.get('/api/activity').query({ session_id: PHONE })).body.items.length).toBeGreaterThanOrEqual(
      3,
    );
    const ws = await WsClient.open(`${server.url.replace('http', 'ws')}/v1/events/ws`);
    open.clients.push(ws);
    ws.send({ type: 'connect', message_id: 'm1', session_id: PHONE });
    expect(await ws.nextOfType('ack')).toMatchObject({ session_id: key });
    ws.send({
      type: 'control_state',
      message_id: 'c1',
      session_id: PHONE,
      event: 'screen_state',
      screen: 'selfie_capture',
    });
    await ws.nextOfType('ack', (frame) => frame.message_id === 'c1');
    await h.http.post('/v1/assistant/session/stop').send({ session_id: PHONE }).expect(200);
    expect(h.system.sessionHost.size).toBe(1);
    const everything = `${await everySurface(h, [key])}\n${JSON.stringify(ws.frames)}\n${start.text}`;
    for (const raw of RAW) expect(everything, raw).not.toContain(raw);
    // An opaque id is kept as sent, a UUID whose last group is all digits included.
    for (const opaque of ['7664f88e-4980-41c3-bec0-f0e1591ee548', 'rn-0f4e3d2c-1b0a-4988-8776-655443322110']) {
      await h.http.post('/v1/events').send({ session_id: opaque, event: 'screen_state' }).expect(200);
      expect(h.system.sessionHost.has(opaque), opaque).toBe(true);
    }
  });

  it("a WebSocket upgrade's X-Client-ID and a frame's message_id are masked too", async () => {
    const h = createHarness({ env: { LOG_LEVEL: 'trace' } });
    const server = await serve(h);
    open.servers.push(server);
    const ws = await WsClient.open(`${server.url.replace('http', 'ws')}/v1/events/ws`, { 'X-Client-ID': PAN });
    open.clients.push(ws);
    ws.send({ type: 'connect', message_id: 'm1', session_id: 'w1' });
    await ws.nextOfType('ack');
    ws.send({ type: 'trigger_evaluate', message_id: 't1', signals: { screen: 'pan_details', time_spent: 30 } });
    await ws.nextOfType('trigger_response');
    ws.send({ type: 'heartbeat', message_id: PHONE });
    expect(await ws.nextOfType('heartbeat')).toMatchObject({ message_id: '******3210' });
    ws.send({ type: 'control_state', message_id: EMAIL, event: 'validation_failed', errors: 'not a list' });
    await ws.nextOfType('error');
    const everything = `${await everySurface(h, ['w1'])}\n${JSON.stringify(ws.frames)}`;
    for (const raw of RAW) expect(everything, raw).not.toContain(raw);
  });
});
