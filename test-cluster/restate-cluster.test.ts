import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:http2';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restatePublicKey } from '../scripts/cluster/request-signing.js';
import { TokenVerifier } from 'livekit-server-sdk';
import type { LiveKitStandIn } from '../test/support/livekit-stand-in.js';
import { STAND_IN_KEY, STAND_IN_SECRET, startLiveKitStandIn } from '../test/support/livekit-stand-in.js';
import { SseTestClient } from '../test/support/sse-client.js';
import { WsClient } from '../test/support/ws-client.js';
import type { Item } from './cluster-calls.js';
import { clusterCalls, eventually } from './cluster-calls.js';
import { suiteCluster } from './fixtures/suite-cluster.js';

/** Short timers by configuration: Restate's clock is the real one. */
const COOLDOWN_SECONDS = 2;
const REENGAGEMENT_SECONDS = 3;
const IDLE_TTL_SECONDS = 8;
/** A delayed call runs at or after its time; on a shared 2-core machine allow this much lateness. */
const LATE_MS = 4000;

let liveKit: LiveKitStandIn;
beforeAll(async () => {
  liveKit = await startLiveKitStandIn();
});
afterAll(async () => {
  await liveKit?.close();
});

const { cluster } = suiteCluster({
  name: 'cluster-test',
  processes: 2,
  cooldownSeconds: COOLDOWN_SECONDS,
  env: () => ({
    ...liveKit.env(),
    REENGAGEMENT_INACTIVITY_SECONDS: String(REENGAGEMENT_SECONDS),
    SESSION_IDLE_TTL_SECONDS: String(IDLE_TTL_SECONDS),
  }),
  startTimeoutMs: 180_000,
});
const { post, get, activityOf, stateOf, invocations } = clusterCalls(cluster);
const processUrl = (index: number) => `http://127.0.0.1:${cluster().processes[index]!.port}`;
/** The same calls to one process, past the proxy. */
const atProcess = (index: number) => clusterCalls(cluster, () => processUrl(index));
/** The session's object state as Restate holds it. */
const storedState = (sessionId: string) => stateOf<{ value: Record<string, unknown> }>(sessionId, 'session');

describe('SESSION_HOST=restate behind a round-robin proxy (real Restate server, real redis-server)', () => {
  it("serves one session's events through both processes in order, each response seeing its own write", async () => {
    const screens = Array.from({ length: 12 }, (_, index) => `step_${index}`);
    for (const screen of screens) {
      const answer = await post('/v1/events', { session_id: 'order', user_id: 'u1', event: 'screen_view', screen });
      expect(answer.status).toBe(200);
      // Round-robin: the read goes to the other process than the write did, and still sees it.
      expect((await get('/api/sessions/order')).body.screen).toBe(screen);
    }
    const items = await eventually(
      () => activityOf('order', 'event'),
      (found) => found.length === screens.length,
    );
    expect(items.map((item) => item.payload.screen)).toEqual(screens);
    // The same items in the same order from either process.
    expect((await atProcess(0).activityOf('order', 'event')).map((item) => item.id)).toEqual(
      items.map((item) => item.id),
    );
    expect((await atProcess(1).activityOf('order', 'event')).map((item) => item.id)).toEqual(
      items.map((item) => item.id),
    );
  });

  it('sends SDK events one-way; per session, events and the calls and reads after them keep their order', async () => {
    const screens = Array.from({ length: 30 }, (_, index) => `seq_${index}`);
    for (const [index, screen] of screens.entries()) {
      const started = Date.now();
      const answer = await atProcess(index % 2).post('/v1/events', {
        session_id: 'one-way',
        user_id: 'u5',
        event: 'screen_view',
        screen,
      });
      expect(answer.status).toBe(200);
      expect(answer.body.status).toBe('ok');
      // The answer is the time the service took the event (it has not necessarily run yet).
      expect(Number(answer.body.ingested_at)).toBeGreaterThanOrEqual(Math.floor(started / 1000));
    }
    // A call right after the last acknowledgement, on the process that did not take it, waits its turn behind every event.
    const context = await atProcess(0).get('/v1/assistant/context/one-way');
    expect(context.status).toBe(200);
    expect(context.body.current_screen).toBe('seq_29');
    // A read, likewise.
    expect((await atProcess(1).get('/api/sessions/one-way')).body.screen).toBe('seq_29');
    // Every event was an invocation of the one-way handler, none a request-response `ask`.
    expect(await invocations('one-way', 'ingest')).toHaveLength(screens.length);
    expect(await invocations('one-way', 'ask')).toHaveLength(1);
    // Recorded once each, in the order the service acknowledged them.
    const items = await eventually(
      () => activityOf('one-way', 'event'),
      (found) => found.length >= screens.length,
    );
    expect(items.map((item) => item.payload.screen)).toEqual(screens);
  });

  it('a burst of one session’s events leaves a process in batches: fewer invocations than events, each event applied once', async () => {
    // 40 connections at once to one process: most events arrive while an earlier one is being sent.
    const components = Array.from({ length: 40 }, (_, index) => `field_${index}`);
    const answers = await Promise.all(
      components.map((component_id) =>
        atProcess(0).post('/v1/events', {
          session_id: 'burst',
          user_id: 'u-burst',
          event: 'component_focus',
          screen: 'pan_details',
          component_id,
        }),
      ),
    );
    expect(answers.every((answer) => answer.status === 200 && answer.body.status === 'ok')).toBe(true);
    const items = await eventually(
      () => activityOf('burst', 'event'),
      (found) => found.length >= components.length,
    );
    expect(items.map((item) => item.payload.component_id).sort()).toEqual([...components].sort());
    // Recorded in the order the session applied them: never back in time.
    const times = items.map((item) => Date.parse(item.timestamp));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    const batches = await invocations('burst', 'ingest');
    expect(batches.length).toBeLessThan(components.length);
    expect(batches.every((batch) => batch.status === 'completed')).toBe(true);
  });

  it('the session endpoint takes only calls the Restate server signed: unsigned or signed with another key, 401', async () => {
    /** A call to one process's endpoint as Restate makes it (HTTP/2), with the request-identity headers given. */
    const callEndpoint = (path: string, headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const client = connect(`http://127.0.0.1:${cluster().processes[0]!.endpointPort}`);
        client.on('error', reject);
        const discover = path === '/discover';
        const request = client.request({
          ':method': discover ? 'GET' : 'POST',
          ':path': path,
          ...(discover
            ? { accept: 'application/vnd.restate.endpointmanifest.v4+json' }
            : { 'content-type': 'application/vnd.restate.invocation.v5' }),
          ...headers,
        });
        request.on('response', (head) => {
          resolve(Number(head[':status']));
          client.close();
        });
        request.on('error', reject);
        request.end();
      });
    /** Restate's own form: an EdDSA JWT whose audience is the path, kid the signer's public key, valid a minute either side. */
    const signed = async (path: string, key: KeyObject, kid: string) => {
      const now = Math.floor(Date.now() / 1000);
      const jwt = await new SignJWT({})
        .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid })
        .setAudience(path)
        .setIssuedAt(now)
        .setNotBefore(now - 60)
        .setExpirationTime(now + 60)
        .sign(key);
      return { 'x-restate-signature-scheme': 'v1', 'x-restate-jwt-v1': jwt };
    };
    const own = readFileSync(cluster().signing.privateKeyFile, 'utf8');
    expect(restatePublicKey(own)).toBe(cluster().signing.publicKey);
    const other = generateKeyPairSync('ed25519').privateKey;
    const otherKid = restatePublicKey(other.export({ type: 'pkcs8', format: 'pem' }).toString());
    const invoke = '/invoke/KycSession/ask';

    expect(await callEndpoint('/discover', {})).toBe(401);
    expect(await callEndpoint(invoke, {})).toBe(401);
    expect(await callEndpoint(invoke, { 'x-restate-signature-scheme': 'unsigned' })).toBe(401);
    expect(await callEndpoint('/discover', await signed('/discover', other, otherKid))).toBe(401);
    expect(await callEndpoint(invoke, await signed(invoke, other, otherKid))).toBe(401);
    // Another key claiming to be the cluster's: the signature is what counts.
    expect(await callEndpoint(invoke, await signed(invoke, other, cluster().signing.publicKey))).toBe(401);
    // The same form signed with the server's own key is taken: the refusals above are about the key alone.
    expect(
      await callEndpoint('/discover', await signed('/discover', createPrivateKey(own), cluster().signing.publicKey)),
    ).toBe(200);
    // A signature for another path is not one for this path.
    expect(
      await callEndpoint(invoke, await signed('/discover', createPrivateKey(own), cluster().signing.publicKey)),
    ).toBe(401);
  });

  it('/health shows Restate and Redis reachable', async () => {
    const health = await get('/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({
      status: 'ok',
      store: { kind: 'redis', status: 'ok' },
      cluster: { restate: { ingress: 'ok', admin: 'ok' }, redis: 'ok' },
    });
  });

  it('a request sent again with the same Idempotency-Key, to the other process, is applied once and gets the first answer', async () => {
    const send = (base: string) =>
      fetch(`${base}/v1/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'retry-1' },
        body: JSON.stringify({ session_id: 'retried', event: 'screen_view', screen: 'pan_details' }),
      }).then(async (response) => ({ status: response.status, body: await response.text() }));
    const first = await send(processUrl(0));
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const again = await send(processUrl(1));
    expect(first.status).toBe(200);
    expect(again).toEqual(first);
    expect(
      await eventually(
        () => activityOf('retried', 'event'),
        (items) => items.length > 0,
      ),
    ).toHaveLength(1);
    const unusable = await fetch(`${processUrl(0)}/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'has space' },
      body: JSON.stringify({ session_id: 'retried', event: 'screen_view', screen: 'other' }),
    });
    expect(unusable.status).toBe(422);
    expect(await unusable.json()).toEqual({ detail: 'Idempotency-Key: must be 1-128 characters of A-Za-z0-9._:@/+=-' });
    expect(await activityOf('retried', 'event')).toHaveLength(1);
  });

  it('lists sessions from Restate state, whichever process answers', async () => {
    await post('/v1/events', { session_id: 'listed', user_id: 'u2', event: 'screen_view', screen: 'pan_details' });
    type Page = { sessions: { session_id: string; screen: string }[]; total: number };
    for (const index of [0, 1]) {
      // A listing reads what invocations have stored: an event taken a moment ago may still be queued.
      const page = await eventually(
        async () => (await atProcess(index).get('/api/sessions?q=listed')).body as Page,
        (found) => found.total === 1,
      );
      expect(page.total).toBe(1);
      expect(page.sessions[0]).toMatchObject({ session_id: 'listed', screen: 'pan_details' });
    }
  });

  it('keeps pending wake calls bounded while every event re-arms the timers', async () => {
    for (let index = 0; index < 30; index += 1)
      await post('/v1/events', { session_id: 'busy', event: 'component_input', screen: 'pan_details' });
    await post('/api/dropoff/register', { session_id: 'busy', reason: 'app_backgrounded' });
    for (let index = 0; index < 30; index += 1)
      await post('/v1/events', { session_id: 'busy', event: 'component_input', screen: 'pan_details' });
    const pending = await invocations('busy', 'wake', 'scheduled');
    // The idle check and the reengagement timer: never one per event.
    expect(pending.length).toBeGreaterThanOrEqual(1);
    expect(pending.length).toBeLessThanOrEqual(2);
    // Only the object itself schedules wakes: the ingress refuses the handler.
    const direct = await fetch(`${cluster().restate.ingressUrl}KycSession/busy/wake`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '0',
    });
    expect(direct.status).toBeGreaterThanOrEqual(400);
    expect(direct.status).toBeLessThan(500);
  });

  it('a cooldown ends once, on time, through a delayed wake call', async () => {
    await post('/v1/events', { session_id: 'cool', event: 'screen_view', screen: 'pan_details' });
    const fired = await post('/v1/assistant/trigger/evaluate', {
      session_id: 'cool',
      signals: { errors: ['pan_invalid', 'pan_invalid_format'] },
    });
    expect(fired.body.trigger).toBe(true);
    const firedAt = Date.now();
    expect((await storedState('cool'))!.value.trigger).toBe('cooldown');
    const after = await eventually(
      () => storedState('cool'),
      (state) => state?.value.trigger === 'ready',
      COOLDOWN_SECONDS * 1000 + LATE_MS + 5000,
    );
    const endedAt = Date.now();
    expect(after!.value.trigger).toBe('ready');
    expect(endedAt - firedAt).toBeGreaterThanOrEqual(COOLDOWN_SECONDS * 1000 - 200);
    expect(endedAt - firedAt).toBeLessThan(COOLDOWN_SECONDS * 1000 + LATE_MS);
    // Restate's invocation table may show the wake as completed a moment after its state is visible.
    const completed = await eventually(
      () => invocations('cool', 'wake', 'completed'),
      (rows) => rows.length > 0,
    );
    expect(completed).toHaveLength(1);
  });

  it('a reengagement timer fires once, on time, and records one item', async () => {
    await post('/v1/events', { session_id: 'away', user_id: 'u3', event: 'screen_view', screen: 'pan_details' });
    const registered = await post('/api/dropoff/register', { session_id: 'away', reason: 'app_backgrounded' });
    expect(registered.status).toBe(200);
    const armedAt = Date.now();
    const timed = await eventually(
      async () => (await activityOf('away', 'reengagement')).filter((item) => item.payload.source === 'timer'),
      (found) => found.length > 0,
      REENGAGEMENT_SECONDS * 1000 + LATE_MS + 5000,
    );
    expect(timed).toHaveLength(1);
    const at = Date.parse(timed[0]!.timestamp);
    expect(at).toBeGreaterThanOrEqual(armedAt - 1000 + REENGAGEMENT_SECONDS * 1000);
    expect(at).toBeLessThan(armedAt + REENGAGEMENT_SECONDS * 1000 + LATE_MS);
    // Once: no second item after another period.
    await new Promise((resolve) => setTimeout(resolve, REENGAGEMENT_SECONDS * 1000 + 1000));
    expect((await activityOf('away', 'reengagement')).filter((item) => item.payload.source === 'timer')).toHaveLength(
      1,
    );
  });

  it('a session idle for SESSION_IDLE_TTL_SECONDS is ended by its wake: its state is gone', async () => {
    await post('/v1/events', { session_id: 'idle', event: 'screen_view', screen: 'welcome' });
    expect((await get('/api/sessions/idle')).status).toBe(200);
    const gone = await eventually(
      () => storedState('idle'),
      (state) => state === undefined,
      IDLE_TTL_SECONDS * 1000 + LATE_MS + 5000,
    );
    expect(gone).toBeUndefined();
    expect((await get('/api/sessions/idle')).status).toBe(404);
    expect((await get('/api/sessions?q=idle')).body.total).toBe(0);
  });

  it('a session whose kept state the machine cannot run is cleared and begun anew, not retried forever', async () => {
    await post('/v1/events', { session_id: 'damaged', event: 'screen_view', screen: 'welcome' });
    const kept = (await eventually(
      () => storedState('damaged'),
      (state) => state !== undefined,
    )) as unknown as { context: Record<string, unknown>; summary: Record<string, unknown> };
    // An edit through Restate's admin API: no trigger memory, and idle since the epoch (the check that read it first).
    delete kept.context.trigger;
    kept.summary.last_activity_at = 0;
    const edit = await fetch(`${cluster().restate.adminUrl}services/KycSession/state`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ object_key: 'damaged', new_state: { session: [...Buffer.from(JSON.stringify(kept))] } }),
    });
    expect(edit.status).toBe(202);
    await eventually(
      () => storedState('damaged'),
      (state) => (state as unknown as { context: Record<string, unknown> } | undefined)?.context.trigger === undefined,
    );
    expect((await get('/api/sessions/damaged')).status).toBe(404);
    const again = await post('/v1/events', { session_id: 'damaged', event: 'screen_view', screen: 'otp' });
    expect(again.status).toBe(200);
    expect((await get('/api/sessions/damaged')).body.screen).toBe('otp');
    expect(await invocations('damaged', 'ask', 'backing-off')).toEqual([]);
  });

  it('never dispatches two agents when starts for one session arrive concurrently on both processes', async () => {
    await post('/v1/events', { session_id: 'voice', user_id: 'u4', event: 'screen_view', screen: 'pan_details' });
    const starts = await Promise.all(
      Array.from({ length: 6 }, (_, index) =>
        atProcess(index % 2).post('/v1/assistant/session/start', {
          session_id: 'voice',
          user_id: 'u4',
          screen: 'pan_details',
        }),
      ),
    );
    expect(starts.map((start) => start.status)).toEqual(Array(6).fill(200));
    const room = starts[0]!.body.media_room as string;
    expect(room).toBe('kyc-room-voice');
    expect(starts.every((start) => start.body.media_room === room && start.body.token)).toBe(true);
    expect(liveKit.dispatches.filter((dispatch) => dispatch.room === room)).toHaveLength(1);
    expect(liveKit.methodsCalled().filter((method) => method === 'CreateDispatch')).toHaveLength(1);
  });

  it('keeps no participant token in Restate: the object answers a start without one, and the process that asked mints it', async () => {
    const headers = { 'idempotency-key': 'named-voice-start' };
    const body = { session_id: 'named-voice', user_id: 'u9', screen: 'pan_details' };
    const first = await atProcess(0).post('/v1/assistant/session/start', body, headers);
    expect(first.status).toBe(200);
    const verifier = new TokenVerifier(STAND_IN_KEY, STAND_IN_SECRET);
    expect(await verifier.verify(first.body.token as string)).toMatchObject({
      sub: 'u9',
      video: { roomJoin: true, room: 'kyc-room-named-voice' },
    });
    // What Restate keeps for the key (the answer a retry gets) holds no token.
    const kept = await fetch(
      `${cluster().restate.ingressUrl}restate/invocation/KycSession/named-voice/ask/named-voice-start/output`,
    );
    expect(kept.status).toBe(200);
    const keptText = await kept.text();
    expect(keptText).not.toContain((first.body.token as string).split('.')[2]!);
    expect((JSON.parse(keptText) as { value: { token: string } }).value.token).toBe('');
    // A retry on the other process gets the first answer, with a token minted there.
    const copy = await atProcess(1).post('/v1/assistant/session/start', body, headers);
    expect(copy.status).toBe(200);
    expect(copy.body.assistant_invocation_id).toBe(first.body.assistant_invocation_id);
    expect(await verifier.verify(copy.body.token as string)).toMatchObject({
      sub: 'u9',
      video: { roomJoin: true, room: 'kyc-room-named-voice' },
    });
    expect(liveKit.dispatches.filter((dispatch) => dispatch.room === 'kyc-room-named-voice')).toHaveLength(1);
  });

  it('an SSE client resumes on the other process with Last-Event-ID: nothing lost, nothing repeated', async () => {
    const first = await SseTestClient.open(`${processUrl(0)}/api/activity/stream?session_id=sse`);
    for (let index = 0; index < 3; index += 1)
      await post('/v1/events', { session_id: 'sse', event: 'screen_view', screen: `before_${index}` });
    await first.until((client) => client.messages.length >= 3, 10_000);
    const lastId = first.messages.at(-1)!.id!;
    first.close();
    for (let index = 0; index < 3; index += 1)
      await post('/v1/events', { session_id: 'sse', event: 'screen_view', screen: `after_${index}` });
    const resumed = await SseTestClient.open(`${processUrl(1)}/api/activity/stream?session_id=sse`, {
      'last-event-id': lastId,
    });
    await resumed.until((client) => client.messages.filter((message) => message.event !== 'reset').length >= 3, 10_000);
    const screens = resumed.messages
      .filter((message) => message.event !== 'reset')
      .map((message) => (JSON.parse(message.data) as Item).payload.screen);
    resumed.close();
    expect(screens).toEqual(['after_0', 'after_1', 'after_2']);
  });

  it("each process's activity actor feeds it every item of the shared stream, once and in order, whichever process recorded it", async () => {
    const streams = await Promise.all(
      [0, 1].map((index) => SseTestClient.open(`${processUrl(index)}/api/activity/stream?session_id=fed-both`)),
    );
    await Promise.all(streams.map((stream) => stream.until((client) => client.retry !== undefined, 10_000)));
    for (const index of [0, 1]) {
      const readers = (await atProcess(index).get('/api/status')).body.activity as { readers: string[] };
      expect(readers.readers).toEqual(['metrics', 'flow_graphs', 'sse']);
    }
    for (let index = 0; index < 20; index += 1) {
      const answer = await atProcess(index % 2).post('/v1/events', {
        session_id: 'fed-both',
        event: 'screen_view',
        screen: `step_${index}`,
      });
      expect(answer.status).toBe(200);
    }
    await Promise.all(streams.map((stream) => stream.until((client) => client.ids.length >= 20, 15_000)));
    const [first, second] = streams.map((stream) => stream.items);
    for (const stream of streams) stream.close();
    expect(first!.map((item) => item.payload.screen)).toEqual(
      Array.from({ length: 20 }, (_, index) => `step_${index}`),
    );
    expect(second!.map((item) => item.id)).toEqual(first!.map((item) => item.id));
    const ids = first!.map((item) => Number(item.id));
    expect(ids).toEqual([...new Set(ids)].sort((a, b) => a - b));
  });

  it('a flow graph recorded through one process is not recorded again through the other, which learnt of it from the stream', async () => {
    const flow = {
      flow_key: 'learnt_across',
      client_id: 'tenant-a',
      step_sequence: ['pan_details', 'aadhaar_otp', 'selfie_capture'],
    };
    expect((await atProcess(0).post('/v1/flows/set', flow)).status).toBe(200);
    const recorded = async (index: number) =>
      ((await atProcess(index).get('/api/activity?kind=flow_graph_recorded&limit=500')).body.items as Item[]).filter(
        (item) => item.payload.flow_key === 'learnt_across',
      );
    // The other process has read the item from the stream: its activity actor gave it to the recorder then.
    expect(
      await eventually(
        () => recorded(1),
        (items) => items.length > 0,
      ),
    ).toHaveLength(1);
    expect((await atProcess(1).post('/v1/flows/set', flow)).status).toBe(200);
    expect((await atProcess(1).post('/v1/flows/set', { ...flow, client_id: 'tenant-b' })).status).toBe(200);
    const all = await eventually(
      () => recorded(0),
      (items) => items.length >= 2,
    );
    expect(all.map((item) => item.payload.client_id)).toEqual(['tenant-a', 'tenant-b']);
  });

  it('pushes a command a session decides on one process to control sockets on every process, once each', async () => {
    const session = 'pushed-across';
    const sockets = await Promise.all(
      [0, 1].map((index) => WsClient.open(`ws://127.0.0.1:${cluster().processes[index]!.port}/v1/events/ws`)),
    );
    try {
      for (const socket of sockets) {
        socket.send({
          type: 'connect',
          message_id: 'm1',
          session_id: session,
          user_id: 'u-ws',
          sdk_version: '1.2.0',
          client: 'android',
          client_id: 'kycis_demo',
        });
        await socket.nextOfType('ack');
      }
      // Decided by an invocation the second process asked for: the first process's socket hears of it too.
      const decided = await atProcess(1).post('/v1/assistant/trigger/evaluate', {
        session_id: session,
        signals: { screen: 'pan_details', errors: ['a', 'b'] },
      });
      expect(decided.body).toMatchObject({ trigger: true });
      for (const socket of sockets) {
        expect(await socket.nextOfType('command')).toMatchObject({
          command: 'suggest_start_voice_agent',
          session_id: session,
        });
      }
      // Once each: a heartbeat round trip later, no second copy has arrived on either socket.
      for (const socket of sockets) {
        socket.send({ type: 'heartbeat', message_id: 'hb' });
        await socket.nextOfType('heartbeat');
        expect(socket.frames.filter((frame) => frame.type === 'command')).toHaveLength(1);
      }
    } finally {
      for (const socket of sockets) socket.close();
    }
  });

  it('loses nothing acknowledged, and repeats nothing, when one service process is killed with SIGKILL mid-load', async () => {
    const sessions = ['k0', 'k1', 'k2', 'k3'];
    const acknowledged = new Map<string, string[]>(sessions.map((id) => [id, []]));
    let killed = false;
    const load = sessions.map(async (sessionId) => {
      for (let index = 0; index < 25; index += 1) {
        const screen = `${sessionId}_${index}`;
        if (index === 10 && sessionId === 'k0' && !killed) {
          killed = true;
          void cluster().processes[1]!.kill('SIGKILL');
        }
        try {
          const answer = await post('/v1/events', { session_id: sessionId, event: 'screen_view', screen });
          if (answer.status === 200) acknowledged.get(sessionId)!.push(screen);
        } catch {
          // Cut off with the process: not acknowledged, so the client would retry.
        }
      }
    });
    await Promise.all(load);
    expect(killed).toBe(true);
    let total = 0;
    for (const sessionId of sessions) {
      // Acknowledged once Restate took them; each is recorded once its invocation has run.
      const taken = acknowledged.get(sessionId)!;
      const recorded = (
        await eventually(
          () => atProcess(0).activityOf(sessionId, 'event'),
          (items) => taken.every((screen) => items.some((item) => item.payload.screen === screen)),
        )
      ).map((item) => item.payload.screen);
      for (const screen of taken) expect(recorded).toContain(screen);
      // A request cut off with the process is sent again by the proxy with the same Idempotency-Key: recorded once.
      expect(new Set(recorded).size).toBe(recorded.length);
      total += acknowledged.get(sessionId)!.length;
      // The session itself holds the last event, once that was acknowledged.
      const last = `${sessionId}_24`;
      if (acknowledged.get(sessionId)!.includes(last))
        expect((await atProcess(0).get(`/api/sessions/${sessionId}`)).body.screen).toBe(last);
    }
    // The proxy's retries reach the survivor: every request is answered.
    expect(total).toBe(sessions.length * 25);
  });

  it('/health answers 503 naming Restate once it is unreachable', async () => {
    await cluster().restate.stop();
    const health = await atProcess(0).get('/health');
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({
      status: 'cluster_unreachable',
      cluster: { restate: { ingress: 'unreachable', admin: 'unreachable' }, redis: 'ok' },
    });
  });
});
