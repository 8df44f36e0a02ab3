// Runs on one store: frames, acks, backpressure and origins are the socket's, before any store; vitest.config.ts.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RunningServer } from '../../src/http/server.js';
import type { Harness } from '../support/harness.js';
import { createHarness, serve } from '../support/harness.js';
import { WsClient } from '../support/ws-client.js';
import type { SqliteStore } from '../../src/store/sqlite-store.js';

const SESSION = '7664f88e-4980-41c3-bec0-f0e1591ee548';
const open: { servers: RunningServer[]; clients: WsClient[] } = { servers: [], clients: [] };

async function setUp(env: Record<string, string> = {}): Promise<{ h: Harness; url: string }> {
  const h = createHarness({ env });
  const server = await serve(h);
  open.servers.push(server);
  return { h, url: `${server.url.replace('http', 'ws')}/v1/events/ws` };
}

async function connect(url: string, headers: Record<string, string> = {}): Promise<WsClient> {
  const client = await WsClient.open(url, headers);
  open.clients.push(client);
  return client;
}

afterEach(async () => {
  for (const client of open.clients.splice(0)) client.close();
  for (const server of open.servers.splice(0)) await server.close(100);
});

const connectFrame = {
  type: 'connect',
  message_id: 'm1',
  session_id: SESSION,
  user_id: 'demo-user',
  sdk_version: '1.2.0',
  client: 'android',
  client_id: 'kycis_demo',
};

describe('GET /v1/events/ws: what a retry can get past is unavailable, as HTTP answers 503', () => {
  it('a control_state the store refuses to commit answers error unavailable', async () => {
    const { h, url } = await setUp({ STORE: 'sqlite' });
    const ws = await connect(url);
    ws.send(connectFrame);
    await ws.nextOfType('ack');
    (h.store.sessions as SqliteStore).db.exec('PRAGMA query_only = 1');
    ws.send({
      type: 'control_state',
      message_id: 'c1',
      session_id: SESSION,
      event: 'screen_state',
      screen: 'pan_details',
    });
    expect(await ws.nextOfType('error', (f) => f.message_id === 'c1')).toMatchObject({
      code: 'unavailable',
      message: 'the change could not be stored (storage full or failing); retry later',
    });
    (h.store.sessions as SqliteStore).db.exec('PRAGMA query_only = 0');
  });
});

describe('GET /v1/events/ws: the control plane on a real socket', () => {
  it('acks connect, echoes heartbeats, and updates the session with control_state as POST /v1/events does', async () => {
    const { h, url } = await setUp();
    const ws = await connect(url);
    ws.send(connectFrame);
    expect(await ws.nextOfType('ack')).toMatchObject({ status: 'ok', detail: 'connected', message_id: 'm1' });
    ws.send({ type: 'heartbeat', message_id: 'hb1' });
    expect(await ws.nextOfType('heartbeat')).toMatchObject({ message_id: 'hb1' });
    ws.send({
      type: 'control_state',
      message_id: 'c1',
      session_id: SESSION,
      event: 'screen_state',
      screen: 'pan_details',
    });
    expect(await ws.nextOfType('ack', (f) => f.message_id === 'c1')).toMatchObject({
      status: 'ok',
      detail: 'screen_state',
    });
    const context = await h.http.get(`/v1/assistant/context/${SESSION}`);
    expect(context.body.current_screen).toBe('pan_details');
    const events = (await h.http.get('/api/activity').query({ kind: 'event' })).body.items;
    expect(events.map((item: { payload: { event: string } }) => item.payload.event)).toEqual(['screen_state']);
  });

  it('answers trigger_evaluate with trigger_response and pushes suggest_start_voice_agent on its own after a second failure', async () => {
    const { url } = await setUp();
    const ws = await connect(url);
    ws.send(connectFrame);
    await ws.nextOfType('ack');
    ws.send({
      type: 'trigger_evaluate',
      message_id: 't1',
      session_id: SESSION,
      user_id: 'demo-user',
      signals: { screen: 'pan_details', time_spent: 7, errors: [], idle_seconds: 7 },
    });
    expect(await ws.nextOfType('trigger_response')).toMatchObject({
      message_id: 't1',
      trigger: false,
      reason: 'none',
      action: 'none',
    });
    for (const id of ['v1', 'v2']) {
      ws.send({
        type: 'control_state',
        message_id: id,
        event: 'validation_failed',
        screen: 'pan_details',
        failure_reason_code: 'pan_invalid_format',
        errors: ['pan_invalid_format'],
        signal_strength: 'strong',
      });
    }
    const command = await ws.nextOfType('command', (f) => f.command === 'suggest_start_voice_agent');
    expect(command).toMatchObject({
      session_id: SESSION,
      payload: { reason: 'repeated_errors', intervention_mode: 'offer' },
    });
    expect(command.command_id).toEqual(expect.any(String));
    // Frames are handled in order: each control_state is acked before what it caused is pushed.
    const order = ws.frames.map((f) =>
      f.type === 'ack' ? `ack:${String(f.message_id)}` : f.type === 'command' ? String(f.command) : f.type,
    );
    expect(order.slice(order.indexOf('ack:v1'))).toEqual([
      'ack:v1',
      'show_popup',
      'ack:v2',
      'suggest_start_voice_agent',
    ]);
    // The first failure was worth a popup, pushed the same way.
    expect(ws.frames.find((f) => f.type === 'command' && f.command === 'show_popup')).toMatchObject({
      payload: { reason: 'validation_failed', delay_ms: 1500 },
    });
  });

  it('counts one failure sent as control_state and as POST /v1/events once, as the deployed SDK sends it', async () => {
    const { h, url } = await setUp();
    const ws = await connect(url);
    ws.send(connectFrame);
    await ws.nextOfType('ack');
    const failure = {
      event: 'validation_failed',
      screen: 'pan_details',
      failure_reason_code: 'pan_invalid_format',
      errors: ['pan_invalid_format'],
    };
    const failOnBoth = async (id: string) => {
      ws.send({ type: 'control_state', message_id: id, ...failure, signal_strength: 'strong' });
      await ws.nextOfType('ack', (f) => f.message_id === id);
      await h.http
        .post('/v1/events')
        .send({
          session_id: SESSION,
          user_id: 'demo-user',
          ...failure,
          properties: { error_code: 'pan_invalid_format', signal_strength: 'strong' },
        })
        .expect(200);
    };
    await failOnBoth('v1');
    // The SDK evaluates right after the failure with its code: one failure, no rule matches.
    const first = await h.http
      .post('/v1/assistant/trigger/evaluate')
      .send({ session_id: SESSION, signals: { screen: 'pan_details', errors: ['pan_invalid_format'] } });
    expect(first.body).toMatchObject({ trigger: false, reason: 'none' });
    expect(ws.frames.filter((f) => f.type === 'command' && f.command === 'suggest_start_voice_agent')).toEqual([]);
    h.clock.increment(5_000);
    // The second failure's socket copy is the first to arrive: the session offers voice on it.
    ws.send({ type: 'control_state', message_id: 'v2', ...failure, signal_strength: 'strong' });
    expect(await ws.nextOfType('command', (f) => f.command === 'suggest_start_voice_agent')).toMatchObject({
      payload: { reason: 'repeated_errors' },
    });
    await h.http
      .post('/v1/events')
      .send({ session_id: SESSION, user_id: 'demo-user', ...failure })
      .expect(200);
    // Both copies are listed, the socket's named as such.
    const events = (await h.http.get('/api/activity').query({ kind: 'event', session_id: SESSION })).body.items as {
      payload: { event: string; channel?: string };
    }[];
    expect(events.map((item) => item.payload.channel ?? 'http')).toEqual([
      'control_plane',
      'http',
      'control_plane',
      'http',
    ]);
    expect(ws.frames.filter((f) => f.type === 'command' && f.command === 'suggest_start_voice_agent')).toHaveLength(1);
  });

  it('pushes commands a session decides on over HTTP to the socket subscribed to it, and to no other', async () => {
    const { h, url } = await setUp();
    const mine = await connect(url);
    const other = await connect(url);
    mine.send(connectFrame);
    other.send({ ...connectFrame, session_id: 'someone-else' });
    await mine.nextOfType('ack');
    await other.nextOfType('ack');
    await h.http
      .post('/v1/assistant/trigger/evaluate')
      .send({ session_id: SESSION, signals: { screen: 'pan_details', errors: ['a', 'b'] } });
    expect(await mine.nextOfType('command')).toMatchObject({
      command: 'suggest_start_voice_agent',
      session_id: SESSION,
    });
    other.send({ type: 'heartbeat' });
    await other.nextOfType('heartbeat');
    expect(other.frames.filter((f) => f.type === 'command')).toEqual([]);
  });

  it('answers durable telemetry and unknown frames with error http_only, and bad frames with a clear error', async () => {
    const { url } = await setUp();
    const ws = await connect(url);
    ws.send(connectFrame);
    await ws.nextOfType('ack');
    ws.send({ type: 'component_input', message_id: 'x1', component_id: 'pan_field', hint: 'ABCDE1234F' });
    expect(await ws.nextOfType('error', (f) => f.message_id === 'x1')).toEqual({
      type: 'error',
      code: 'http_only',
      message: 'This signal must use HTTP POST /v1/events',
      message_id: 'x1',
    });
    ws.send({ type: 'control_state', message_id: 'x2', event: 'analytics_data' });
    expect(await ws.nextOfType('error', (f) => f.message_id === 'x2')).toMatchObject({ code: 'http_only' });
    ws.sendRaw('{not json');
    expect(await ws.nextOfType('error', (f) => f.code === 'invalid_json')).toMatchObject({
      message: 'frame is not valid JSON',
    });
    ws.send({ type: 'trigger_evaluate', message_id: 'x3', signals: { time_spent: -1 } });
    const invalid = await ws.nextOfType('error', (f) => f.message_id === 'x3');
    expect(invalid).toMatchObject({ code: 'invalid_frame' });
    expect(String(invalid.message)).toContain('signals.time_spent');
    ws.sendRaw('{"type":"control_state","message_id":"x5","event":"screen_state","screen":"pan\\ud800"}');
    expect(
      await ws.nextOfType('error', (f) => f.code === 'invalid_frame' && String(f.message).includes('surrogate')),
    ).toMatchObject({ message: expect.stringMatching(/^frame\.screen: holds a lone surrogate/) });
    ws.send({ type: 'control_state', message_id: 'x4', session_id: 'another', event: 'screen_state' });
    expect(await ws.nextOfType('error', (f) => f.message_id === 'x4')).toMatchObject({ code: 'session_mismatch' });
  });

  it('cuts a client that stopped reading once what it left unread here passes MAX_UNREAD_BYTES, and goes on serving', async () => {
    const { h, url } = await setUp({ WS_MAX_MESSAGES_PER_SECOND: '1000' });
    const ws = await connect(url);
    ws.send(connectFrame);
    await ws.nextOfType('ack');
    // The client reads nothing more: what the service answers piles up, first in the kernel's buffers, then here.
    ws.socket.pause();
    // Each frame is answered with an error listing its hundred wrong codes, a few KB.
    const bad = {
      type: 'trigger_evaluate',
      message_id: 'slow',
      signals: { errors: Array.from({ length: 100 }, (_, n) => n) },
    };
    for (let round = 0; round < 200 && !h.logs.text.includes('control socket cut'); round += 1) {
      for (let n = 0; n < 500; n += 1) ws.send(bad);
      // A second of the socket's rate window goes by: the next 500 are within it.
      await new Promise<void>((resolve) => setImmediate(resolve));
      h.clock.increment(1000);
    }
    expect(h.logs.text).toContain('control socket cut: its client stopped reading');
    // Cut, not closed politely: the client, reading again, finds the connection dropped.
    ws.socket.resume();
    expect((await ws.whenClosed()).code).toBe(1006);
    const next = await connect(url);
    next.send(connectFrame);
    expect(await next.nextOfType('ack')).toMatchObject({ detail: 'connected' });
  });

  it('asks for connect before anything else', async () => {
    const { url } = await setUp();
    const ws = await connect(url);
    ws.send({ type: 'control_state', message_id: 'early', event: 'screen_state', screen: 'pan_details' });
    expect(await ws.nextOfType('error')).toMatchObject({ code: 'connect_required', message_id: 'early' });
  });

  describe('with API_KEY set', () => {
    it('takes the key from the connect frame, or from X-API-Key at the upgrade', async () => {
      const { url } = await setUp({ API_KEY: 'k1' });
      const inFrame = await connect(url);
      inFrame.send({ ...connectFrame, api_key: 'k1' });
      expect(await inFrame.nextOfType('ack')).toMatchObject({ status: 'ok' });
      const inHeader = await connect(url, { 'X-API-Key': 'k1' });
      inHeader.send(connectFrame);
      expect(await inHeader.nextOfType('ack')).toMatchObject({ status: 'ok' });
    });

    it('closes with 4401 on a wrong or missing key, and refuses a wrong header key at the upgrade', async () => {
      const { url } = await setUp({ API_KEY: 'k1' });
      const wrong = await connect(url);
      wrong.send({ ...connectFrame, api_key: 'nope' });
      expect(await wrong.whenClosed()).toEqual({ code: 4401, reason: 'invalid or missing api key' });
      const missing = await connect(url);
      missing.send(connectFrame);
      expect((await missing.whenClosed()).code).toBe(4401);
      await expect(WsClient.open(url, { 'X-API-Key': 'nope' })).rejects.toThrow('upgrade refused: 401');
    });
  });

  it('a frame sent again with its message_id, on the same socket or after reconnecting, is acked as the first and applied once', async () => {
    const { h, url } = await setUp();
    const frame = {
      type: 'control_state',
      message_id: 'vf-1',
      session_id: SESSION,
      event: 'validation_failed',
      screen: 'pan_details',
      component_id: 'pan_field',
      component_type: 'text_input',
      errors: ['pan_invalid'],
    };
    const first = await connect(url);
    first.send(connectFrame);
    await first.nextOfType('ack');
    for (let i = 0; i < 3; i += 1) first.send(frame);
    for (let i = 0; i < 3; i += 1)
      expect(await first.nextOfType('ack', (f) => f.message_id === 'vf-1')).toEqual({
        type: 'ack',
        status: 'ok',
        detail: 'validation_failed',
        message_id: 'vf-1',
      });
    first.close();
    const again = await connect(url);
    again.send(connectFrame);
    await again.nextOfType('ack');
    again.send(frame);
    expect(await again.nextOfType('ack', (f) => f.message_id === 'vf-1')).toMatchObject({
      detail: 'validation_failed',
    });
    // The same frame with its keys in another order is the same frame (canonical JSON), not a conflict.
    again.send(Object.fromEntries(Object.entries(frame).reverse()));
    expect(await again.nextOfType('ack', (f) => f.message_id === 'vf-1')).toMatchObject({
      detail: 'validation_failed',
    });
    again.send({ ...frame, component_id: 'dob_field' });
    expect(await again.nextOfType('error', (f) => f.message_id === 'vf-1')).toMatchObject({
      code: 'invalid_frame',
      message: expect.stringMatching(/^message_id: already used/),
    });
    expect((await h.http.get(`/api/sessions/${SESSION}`)).body.retry_counts).toEqual({ pan_field: 1 });
  });

  describe('no place and no answer without a key', () => {
    it('sockets whose key has not come take no place among WS_MAX_CONNECTIONS: a keyed client still gets in', async () => {
      const { h, url } = await setUp({ API_KEY: 'k1', WS_MAX_CONNECTIONS: '1' });
      const keyless = await Promise.all([0, 1, 2, 3, 4].map(() => connect(url)));
      const keyed = await connect(url, { 'X-API-Key': 'k1' });
      keyed.send(connectFrame);
      expect(await keyed.nextOfType('ack')).toMatchObject({ status: 'ok' });
      expect((await h.http.get('/health')).body.connections).toMatchObject({ websocket: 1 });
      // The one place is taken: a key that comes later in the connect frame is told to retry.
      keyless[0]!.send({ ...connectFrame, api_key: 'k1' });
      expect(await keyless[0]!.whenClosed()).toEqual({ code: 1013, reason: 'too many connections; retry later' });
    });

    it('a heartbeat, a bad frame or a frame other than connect before the key closes 4401 with no answer', async () => {
      const { url } = await setUp({ API_KEY: 'k1' });
      const sent: (string | Record<string, unknown>)[] = [
        { type: 'heartbeat', message_id: 'hb1' },
        'not json',
        { type: 'control_state', event: 'screen_state', screen: 'pan_details' },
        { type: 'connect' },
      ];
      for (const frame of sent) {
        const ws = await connect(url);
        if (typeof frame === 'string') ws.sendRaw(frame);
        else ws.send(frame);
        expect(await ws.whenClosed()).toEqual({ code: 4401, reason: 'invalid or missing api key' });
        expect(ws.frames).toEqual([]);
      }
    });

    it('closes a socket that has not sent its key within 10 s on the injected clock', async () => {
      const { h, url } = await setUp({ API_KEY: 'k1' });
      const ws = await connect(url);
      await vi.waitFor(() => expect(h.app.controlPlane.size).toBe(1));
      h.clock.increment(9_999);
      expect(ws.closed).toBeUndefined();
      h.clock.increment(1);
      expect(await ws.whenClosed()).toEqual({ code: 4401, reason: 'invalid or missing api key' });
    });
  });

  describe('bounds', () => {
    it('refuses connections over WS_MAX_CONNECTIONS with 503, counted apart from requests, and frees the place on close', async () => {
      const { h, url } = await setUp({ WS_MAX_CONNECTIONS: '1' });
      const first = await connect(url);
      await expect(WsClient.open(url)).rejects.toThrow('upgrade refused: 503');
      expect((await h.http.get('/health')).body.connections).toMatchObject({ websocket: 1 });
      first.close();
      await first.whenClosed();
      await vi.waitFor(async () =>
        expect((await h.http.get('/health')).body.connections).toMatchObject({ websocket: 0 }),
      );
      await connect(url);
    });

    it('closes a frame over WS_MAX_FRAME_BYTES with 1009, and the session is untouched', async () => {
      const { h, url } = await setUp({ WS_MAX_FRAME_BYTES: '2048' });
      const ws = await connect(url);
      ws.send(connectFrame);
      await ws.nextOfType('ack');
      ws.send({ type: 'control_state', event: 'screen_state', screen: 'x'.repeat(4096) });
      expect((await ws.whenClosed()).code).toBe(1009);
      expect(h.system.sessionHost.has(SESSION)).toBe(false);
    });

    it('drops frames over WS_MAX_MESSAGES_PER_SECOND with rate_limited, and closes 4429 on a client that keeps on', async () => {
      const { url } = await setUp({ WS_MAX_MESSAGES_PER_SECOND: '3' });
      const ws = await connect(url);
      for (let i = 0; i < 7; i += 1) ws.send({ type: 'heartbeat', message_id: `h${i}` });
      expect(await ws.whenClosed()).toEqual({ code: 4429, reason: 'too many messages' });
      expect(ws.frames.filter((f) => f.type === 'heartbeat')).toHaveLength(3);
      expect(ws.frames.filter((f) => f.type === 'error' && f.code === 'rate_limited')).toHaveLength(3);
    });

    it('closes an idle socket with 4408 after WS_IDLE_TIMEOUT_SECONDS on the injected clock', async () => {
      const { h, url } = await setUp({ WS_IDLE_TIMEOUT_SECONDS: '30' });
      const ws = await connect(url);
      ws.send(connectFrame);
      await ws.nextOfType('ack');
      h.clock.increment(29_000);
      ws.send({ type: 'heartbeat' });
      await ws.nextOfType('heartbeat');
      h.clock.increment(29_000);
      expect(ws.closed).toBeUndefined();
      h.clock.increment(1_000);
      expect(await ws.whenClosed()).toEqual({ code: 4408, reason: 'idle timeout' });
    });

    it('at shutdown answers every frame it took before closing with 1001: none stored unacked, later ones refused', async () => {
      const { h, url } = await setUp({ STORE: 'sqlite' });
      const ws = await connect(url);
      ws.send(connectFrame);
      await ws.nextOfType('ack');
      for (let i = 0; i < 10; i += 1)
        ws.send({
          type: 'control_state',
          message_id: `c${i}`,
          session_id: SESSION,
          event: 'screen_state',
          screen: `screen_${i}`,
        });
      await ws.nextOfType('ack', (f) => f.message_id === 'c0');
      h.app.beginShutdown();
      expect(await ws.whenClosed()).toEqual({ code: 1001, reason: 'server shutting down' });
      const acked = ws.frames
        .filter((f) => f.type === 'ack' && String(f.message_id).startsWith('c'))
        .map((f) => f.message_id);
      const refused = ws.frames.filter((f) => f.type === 'error' && f.code === 'unavailable');
      expect(acked.length + refused.length).toBe(10);
      // Read from the log itself: the HTTP routes answer 503 once shutdown has begun.
      expect(h.system.activity.list({ limit: 100, kind: 'event' })).toHaveLength(acked.length);
    });

    it('closes every socket with 1001 when the server shuts down', async () => {
      const { h, url } = await setUp();
      const ws = await connect(url);
      ws.send(connectFrame);
      await ws.nextOfType('ack');
      h.app.beginShutdown();
      expect(await ws.whenClosed()).toEqual({ code: 1001, reason: 'server shutting down' });
      await expect(WsClient.open(url)).rejects.toThrow('upgrade refused: 503');
    });

    it('answers a plain GET with 426', async () => {
      const { h } = await setUp();
      const res = await h.http.get('/v1/events/ws');
      expect(res.status).toBe(426);
      expect(res.body.detail).toContain('WebSocket');
    });

    it('refuses an X-Client-ID that is not a plain id, an empty one included, at the upgrade and on a plain GET, 422 {detail}', async () => {
      const { h, url } = await setUp();
      for (const bad of ['', 'acme corp']) {
        await expect(WsClient.open(url, { 'X-Client-ID': bad }), JSON.stringify(bad)).rejects.toThrow(
          'upgrade refused: 422',
        );
        const res = await h.http.get('/v1/events/ws').set('X-Client-ID', bad);
        expect(res.status, JSON.stringify(bad)).toBe(422);
        expect(res.body).toEqual({ detail: 'X-Client-ID: must be 1-128 characters of A-Za-z0-9._:@/+=-' });
      }
      expect(h.app.controlPlane.size).toBe(0);
      const ws = await connect(url, { 'X-Client-ID': 'demo-bank' });
      ws.send(connectFrame);
      await ws.nextOfType('ack');
    });
  });
});
