import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { connect } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { streamBufferBudgetBytes } from '../../src/actor-system/memory-budget.js';
import type { ActivityKind } from '../../src/domain/activity.js';
import type { RunningServer } from '../../src/http/server.js';
import { WRITES_PER_TURN } from '../../src/http/sse/activity-stream-hub.js';
import { kernelSendQueues } from '../../src/integrations/kernel-send-queues.js';
import { RAW_PAN } from '../fixtures/client-events.js';
import type { Harness } from '../support/harness.js';
import { activityId, activityIds, createHarness, serve, settle } from '../support/harness.js';
import { SseTestClient } from '../support/sse-client.js';

const running: RunningServer[] = [];
const clients: SseTestClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await Promise.all(running.splice(0).map((server) => server.close(100)));
});

async function start(
  options: Parameters<typeof createHarness>[0] = {},
): Promise<{ h: Harness; url: string; server: RunningServer }> {
  const h = createHarness(options);
  const server = await serve(h);
  running.push(server);
  return { h, url: server.url, server };
}

async function stream(
  url: string,
  path = '/api/activity/stream',
  headers: Record<string, string> = {},
): Promise<SseTestClient> {
  const client = await SseTestClient.open(url + path, headers);
  clients.push(client);
  return client;
}

function record(
  h: Harness,
  count: number,
  draft: { sessionId?: string; kind?: ActivityKind; payload?: Record<string, unknown> } = {},
): void {
  for (let i = 0; i < count; i += 1) {
    h.system.activity.append({
      kind: draft.kind ?? 'event',
      at: h.clock.now(),
      session_id: draft.sessionId ?? 's1',
      user_id: null,
      payload: draft.payload ?? { n: i },
      trace: { trace_id: 't', request_id: 'r' },
    });
  }
}

/** SimulatedClock keeps its pending timeouts in a private map; the count is what proves nothing is left armed. */
const pendingTimers = (h: Harness) => (h.clock as unknown as { timeouts: Map<unknown, unknown> }).timeouts.size;

const streamsOpen = (h: Harness) => h.app.activityStreams.stats().streams;

/** Waits on the server noticing a socket event, which takes longer on a busy machine. */
const patient = { timeout: 5000 };

describe('GET /api/activity/stream: framing and delivery', () => {
  it('opens with proxy-proof headers and a retry, then pushes each recorded item as id/event/data', async () => {
    const { h, url } = await start();
    const client = await stream(url);
    expect(client.response.status).toBe(200);
    expect(client.response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(client.response.headers.get('cache-control')).toBe('no-cache, no-transform');
    expect(client.response.headers.get('x-accel-buffering')).toBe('no');
    expect(client.response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    await client.until((c) => c.retry !== undefined);
    expect(client.retry).toBe(3000);

    const ingest = await fetch(`${url}/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        session_id: 's1',
        event: 'component_input',
        component_id: 'pan_field',
        component_type: 'text_input',
        hint: RAW_PAN,
        masked: false,
      }),
    });
    expect(ingest.status).toBe(200);
    // The item was recorded before the POST was answered: it must arrive within a second of that.
    await client.until((c) => c.messages.length === 1, 1000);

    const [message] = client.messages;
    expect(message!.event).toBe('activity');
    expect(message!.id).toBe(activityId(h, 1));
    const listed = (await (await fetch(`${url}/api/activity`)).json()) as { items: unknown[] };
    expect(JSON.parse(message!.data)).toEqual(listed.items[0]);
    expect(client.items[0]!.payload).toMatchObject({ event: 'component_input', hint: '**********', masked: true });
    expect(message!.data).not.toContain(RAW_PAN);
  });

  it('writes a heartbeat comment every SSE_HEARTBEAT_SECONDS of the clock', async () => {
    const { h, url } = await start({ env: { SSE_HEARTBEAT_SECONDS: '15' } });
    const client = await stream(url);
    await client.until((c) => c.retry !== undefined);
    h.clock.increment(14_999);
    record(h, 1);
    await client.until((c) => c.messages.length === 1);
    expect(client.comments).toEqual([]);
    h.clock.increment(1);
    await client.until((c) => c.comments.length === 1);
    h.clock.increment(15_000);
    await client.until((c) => c.comments.length === 2);
    expect(client.comments).toEqual(['heartbeat', 'heartbeat']);
    expect(client.messages).toHaveLength(1);
  });

  it('a replay whose filter matches nothing gives the event loop back between batches, then goes live', async () => {
    const { h, url } = await start();
    record(h, 2_560, { sessionId: 'a' });
    // How many batches were read before the event loop had its next turn: all of them, when a
    // replay that never fills its socket ran in one turn and stalled every other request.
    const activity = h.system.activity;
    const after = activity.after.bind(activity);
    let reads = 0;
    let readsInFirstTurn: number | undefined;
    activity.after = (cursor, limit) => {
      if (reads === 0) setImmediate(() => (readsInFirstTurn = reads));
      reads += 1;
      return after(cursor, limit);
    };
    const client = await stream(url, '/api/activity/stream?session_id=nobody', { 'Last-Event-ID': '0' });
    await vi.waitFor(() => expect(reads).toBeGreaterThan(10));
    expect(readsInFirstTurn).toBe(1);
    record(h, 1, { sessionId: 'nobody' });
    await client.until((c) => c.ids.length === 1);
    expect(client.ids).toEqual([activityId(h, 2_561)]);
  });

  it('filters by session_id and kind', async () => {
    const { h, url } = await start();
    const bySession = await stream(url, '/api/activity/stream?session_id=b');
    const byKind = await stream(url, '/api/activity/stream?kind=schema_push');
    const both = await stream(url, '/api/activity/stream?session_id=a&kind=trigger');
    await Promise.all([bySession, byKind, both].map((c) => c.until((x) => x.retry !== undefined)));
    record(h, 2, { sessionId: 'a' });
    record(h, 2, { sessionId: 'b' });
    record(h, 1, { sessionId: 'a', kind: 'schema_push' });
    record(h, 1, { sessionId: 'a', kind: 'trigger' });
    record(h, 1, { sessionId: 'b', kind: 'trigger' });
    await bySession.until((c) => c.ids.length === 3);
    await byKind.until((c) => c.ids.length === 1);
    await both.until((c) => c.ids.length === 1);
    const id = (n: number) => activityId(h, n);
    expect(bySession.ids).toEqual([id(3), id(4), id(7)]);
    expect(byKind.ids).toEqual([id(5)]);
    expect(both.ids).toEqual([id(6)]);
  });

  it.each([
    ['?kind=events', {}, /^kind: must be one of event, trigger/],
    ['?session_id=a&session_id=b', {}, /^session_id: must be a single value/],
    ['', { 'Last-Event-ID': 'abc' }, /^Last-Event-ID: must be a non-negative integer/],
    ['', { 'Last-Event-ID': '-3' }, /^Last-Event-ID: must be a non-negative integer/],
    ['', { 'Last-Event-ID': '1'.repeat(40) }, /^Last-Event-ID: must be a non-negative integer/],
  ])('bad input %s %o → 422 JSON before any stream opens', async (query, headers, detail) => {
    const { h, url } = await start();
    const res = await fetch(`${url}/api/activity/stream${query}`, { headers });
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await res.json()) as { detail: string }).detail).toMatch(detail);
    expect(streamsOpen(h)).toBe(0);
  });

  it('answers HEAD with the stream headers and no stream', async () => {
    const { h, url } = await start();
    const res = await fetch(`${url}/api/activity/stream`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(streamsOpen(h)).toBe(0);
  });

  it('is in the OpenAPI document', async () => {
    const { url } = await start();
    const doc = (await (await fetch(`${url}/openapi.json`)).json()) as {
      paths: Record<string, { get?: { responses: Record<string, { content?: Record<string, unknown> }> } }>;
    };
    const route = doc.paths['/api/activity/stream']?.get;
    expect(Object.keys(route!.responses)).toEqual(['200', '401', '403', '408', '422', '429', '503']);
    expect(Object.keys(route!.responses['200']!.content!)).toEqual(['text/event-stream']);
  });
});

describe('GET /api/activity/stream: resume', () => {
  it('after a dropped connection, Last-Event-ID resumes with nothing lost and nothing repeated', async () => {
    const { h, url, server } = await start();
    const first = await stream(url);
    await first.until((c) => c.retry !== undefined);
    record(h, 3);
    await first.until((c) => c.ids.length === 3);

    server.server.closeAllConnections();
    expect(await first.finished).toBe('error');
    await vi.waitFor(() => expect(streamsOpen(h)).toBe(0), patient);
    record(h, 3);

    const second = await stream(url, '/api/activity/stream', { 'Last-Event-ID': first.ids.at(-1)! });
    await second.until((c) => c.ids.length === 3);
    record(h, 2);
    await second.until((c) => c.ids.length === 5);
    expect([...first.ids, ...second.ids]).toEqual(activityIds(h, 1, 8));
    expect(second.messages.every((m) => m.event === 'activity')).toBe(true);
  });

  it('replays only what matches the filters', async () => {
    const { h, url } = await start();
    record(h, 1, { sessionId: 'a' });
    record(h, 1, { sessionId: 'b' });
    record(h, 1, { sessionId: 'a' });
    const client = await stream(url, '/api/activity/stream?session_id=a', { 'Last-Event-ID': activityId(h, 0) });
    await client.until((c) => c.ids.length === 2);
    record(h, 1, { sessionId: 'a' });
    await client.until((c) => c.ids.length === 3);
    expect(client.ids).toEqual([activityId(h, 1), activityId(h, 3), activityId(h, 4)]);
  });

  it('an id older than the buffer gets a reset naming the gap, then what is left', async () => {
    const { h, url } = await start({ env: { ACTIVITY_BUFFER_SIZE: '5' } });
    record(h, 12);
    const client = await stream(url, '/api/activity/stream', { 'Last-Event-ID': activityId(h, 2) });
    await client.until((c) => c.ids.length === 5);
    const [reset, ...rest] = client.messages;
    expect(reset!.event).toBe('reset');
    expect(reset!.id).toBeUndefined();
    expect(JSON.parse(reset!.data)).toEqual({
      reason: 'behind_buffer',
      requested_after: activityId(h, 2),
      oldest_id: activityId(h, 8),
      latest_id: activityId(h, 12),
    });
    expect(rest.map((m) => m.id)).toEqual(activityIds(h, 8, 12));
  });

  it('an id the buffer never gave (the service restarted) gets a reset, then the whole buffer', async () => {
    const { h, url } = await start({ env: { ACTIVITY_BUFFER_SIZE: '5' } });
    record(h, 3);
    const client = await stream(url, '/api/activity/stream', { 'Last-Event-ID': activityId(h, 5000) });
    await client.until((c) => c.ids.length === 3);
    expect(client.messages[0]!.event).toBe('reset');
    expect(JSON.parse(client.messages[0]!.data)).toEqual({
      reason: 'unknown_id',
      requested_after: null,
      oldest_id: activityId(h, 1),
      latest_id: activityId(h, 3),
    });
    expect(client.ids).toEqual(activityIds(h, 1, 3));
  });

  it('an id never given is not repeated in the reset (it may be any number the client chose)', async () => {
    const { h, url } = await start();
    record(h, 1);
    const client = await stream(url, '/api/activity/stream', { 'Last-Event-ID': '9007199254740991' });
    await client.until((c) => c.messages.length >= 2);
    expect(JSON.parse(client.messages[0]!.data)).toMatchObject({ reason: 'unknown_id', requested_after: null });
    expect(JSON.stringify(client.messages)).not.toContain('9007199254740991');
  });

  it('an id level with the newest item replays nothing and goes live', async () => {
    const { h, url } = await start();
    record(h, 4);
    const client = await stream(url, '/api/activity/stream', { 'Last-Event-ID': activityId(h, 4) });
    await client.until((c) => c.retry !== undefined);
    record(h, 1);
    await client.until((c) => c.messages.length === 1);
    expect(client.ids).toEqual([activityId(h, 5)]);
  });

  it('a replay larger than the byte cap is paced by the socket, not cut, and hands over to live items in order', async () => {
    const { h, url } = await start({ env: { ACTIVITY_BUFFER_SIZE: '3000' } });
    const padding = 'p'.repeat(2048);
    record(h, 3000, { payload: { padding } });
    const client = await stream(url, '/api/activity/stream', { 'Last-Event-ID': activityId(h, 0) });
    await client.until((c) => c.messages.length >= 100);
    record(h, 50, { payload: { padding } });
    await client.until((c) => c.messages.length === 3050, 10_000);
    expect(client.ids).toEqual(activityIds(h, 1, 3050));
    expect(client.messages.some((m) => m.event === 'reset')).toBe(false);
    expect(streamsOpen(h)).toBe(1);
  });
});

/** A stream client that reads the stream's first bytes and then stops reading; `received()` counts what it got. */
async function stalledReader(port: number) {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  let bytes = 0;
  socket.on('data', (chunk: Buffer) => (bytes += chunk.length));
  socket.write('GET /api/activity/stream HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n');
  await vi.waitFor(() => expect(bytes).toBeGreaterThan(0), patient);
  socket.pause();
  return { socket, received: () => bytes };
}

describe('GET /api/activity/stream: limits', () => {
  it("holds all streams' unread bytes within their share of MEMORY_BUDGET_MB, however many stop reading: the slowest is cut first", async () => {
    // The kernel's queues read as often as asked, and each record waits for a reading made after
    // its writes: the count lags the kernel by one reading by design (docs/reference/limits.md), and under a
    // loaded machine a second's lag let eight stalled readers hold twice the share unseen.
    const kernel = kernelSendQueues(0);
    const { h, server } = await start({
      env: { ACTIVITY_BUFFER_SIZE: '20', MEMORY_BUDGET_MB: '64' },
      kernelSendQueues: kernel,
    });
    const budget = streamBufferBudgetBytes(64);
    // Eight stalled readers could hold 8 × SSE_MAX_BUFFER_BYTES (8 MiB) each alone: past the 3.2 MiB budget.
    expect(8 * h.config.stream.maxBufferBytes).toBeGreaterThan(2 * budget);
    const stalled = [];
    for (let i = 0; i < 8; i += 1) stalled.push((await stalledReader(server.port)).socket);
    await vi.waitFor(() => expect(streamsOpen(h)).toBe(8), patient);

    const blob = 'x'.repeat(64 * 1024);
    const frameBytes = blob.length + 1024;
    let peakBuffered = 0;
    for (let recorded = 0; streamsOpen(h) > 0 && recorded < 2000; recorded += 1) {
      const seen = kernel.readings() ?? 0;
      record(h, 1, { payload: { blob } });
      await settle();
      // Two readings landed after the writes: the second began after them (a reading is made when asked).
      if (kernel.readings() !== undefined && streamsOpen(h) > 0) {
        await vi.waitFor(() => {
          h.app.activityStreams.stats();
          expect(kernel.readings()).toBeGreaterThan(seen + 1);
        }, patient);
      }
      peakBuffered = Math.max(peakBuffered, h.app.activityStreams.stats().bufferedBytes);
    }
    expect(streamsOpen(h)).toBe(0);
    expect(peakBuffered).toBeGreaterThan(budget / 2);
    // One record's frame may reach each stream's kernel buffer before a reading shows it.
    expect(peakBuffered).toBeLessThanOrEqual(budget + stalled.length * frameBytes);
    expect(h.logs.text).toContain('activity stream cut: slowest reader with all streams at their memory budget');
    for (const socket of stalled) socket.destroy();
  });

  it('cuts a client that stops reading once its unread bytes pass the cap, holding no more than that', async () => {
    // As above: each record waits for a kernel reading made after its writes, so a loaded
    // machine's lag cannot let the reader hold a second's worth of records past the cap unseen.
    const kernel = kernelSendQueues(0);
    const { h, server } = await start({ env: { ACTIVITY_BUFFER_SIZE: '20' }, kernelSendQueues: kernel });
    const cap = h.config.stream.maxBufferBytes;
    const { socket, received } = await stalledReader(server.port);
    await vi.waitFor(() => expect(streamsOpen(h)).toBe(1), patient);

    const blob = 'x'.repeat(64 * 1024);
    const frameBytes = blob.length + 1024;
    let recorded = 0;
    let peakBuffered = 0;
    while (streamsOpen(h) > 0 && recorded < 2000) {
      const seen = kernel.readings() ?? 0;
      record(h, 1, { payload: { blob } });
      recorded += 1;
      // A durable store delivers an item once it is committed, at the end of the turn.
      await settle();
      if (kernel.readings() !== undefined && streamsOpen(h) > 0) {
        await vi.waitFor(() => {
          h.app.activityStreams.stats();
          expect(kernel.readings()).toBeGreaterThan(seen + 1);
        }, patient);
      }
      peakBuffered = Math.max(peakBuffered, h.app.activityStreams.stats().bufferedBytes);
    }
    expect(streamsOpen(h)).toBe(0);
    expect(recorded).toBeLessThan(2000);
    expect(peakBuffered).toBeGreaterThan(cap / 2);
    expect(peakBuffered).toBeLessThanOrEqual(cap + frameBytes);
    expect(h.app.activityStreams.stats()).toEqual({
      streams: 0,
      subscribed: false,
      heartbeatArmed: false,
      bufferedBytes: 0,
      kernelBytes: 0,
      pendingFanouts: 0,
    });
    expect(h.logs.text).toContain('activity stream cut: client not reading');

    const closed = once(socket, 'close');
    socket.resume();
    await closed;
    expect(received()).toBeLessThan(recorded * blob.length);
  });

  it('leaves no stream, subscription or timer behind after 100 connects and disconnects', async () => {
    const { h, url } = await start();
    const hubReaders = () => h.system.activityActor.readerNames().filter((name) => name === 'sse').length;
    const timersBefore = pendingTimers(h);

    for (let round = 0; round < 100; round += 1) {
      const client = await SseTestClient.open(
        `${url}/api/activity/stream${round % 2 ? '?kind=event' : ''}`,
        round % 3 ? {} : { 'Last-Event-ID': '0' },
      );
      await client.until((c) => c.retry !== undefined);
      if (round % 10 === 0) {
        record(h, 1);
        await client.until((c) => c.ids.length > 0);
      }
      expect(hubReaders()).toBe(1);
      client.close();
    }
    await vi.waitFor(() => expect(streamsOpen(h)).toBe(0), patient);
    expect(h.app.activityStreams.stats()).toEqual({
      streams: 0,
      subscribed: false,
      heartbeatArmed: false,
      bufferedBytes: 0,
      kernelBytes: 0,
      pendingFanouts: 0,
    });
    expect(hubReaders()).toBe(0);
    expect(h.system.activityActor.readerNames()).toEqual(['metrics', 'flow_graphs']);
    expect(pendingTimers(h)).toBe(timersBefore);
  });

  it('opens nothing for a client that left before its stream could open', async () => {
    const h = createHarness();
    const opened: unknown[] = [];
    // A bare server whose handler waits until the client has gone, as a slow middleware might.
    const server = createServer((req, res) => {
      req.socket.once('close', () => {
        opened.push(h.app.activityStreams.open(res, { requestId: 'late' }));
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    socket.write('GET /api/activity/stream HTTP/1.1\r\nHost: localhost\r\n\r\n');
    socket.on('error', () => undefined);
    setImmediate(() => socket.destroy());
    await vi.waitFor(() => expect(opened).toHaveLength(1), patient);
    server.close();
    expect(opened[0]).toEqual({ ok: false, reason: 'gone' });
    expect(h.app.activityStreams.stats()).toEqual({
      streams: 0,
      subscribed: false,
      heartbeatArmed: false,
      bufferedBytes: 0,
      kernelBytes: 0,
      pendingFanouts: 0,
    });
  });

  it('serves every stream from one heartbeat timer, gone with the last stream', async () => {
    const { h, url } = await start({ env: { SSE_HEARTBEAT_SECONDS: '1' } });
    const open = await Promise.all(Array.from({ length: 5 }, () => stream(url)));
    await Promise.all(open.map((c) => c.until((x) => x.retry !== undefined)));
    expect(pendingTimers(h)).toBe(1);
    for (let second = 0; second < 100; second += 1) h.clock.increment(1000);
    await Promise.all(open.map((c) => c.until((x) => x.comments.length === 100)));
    expect(pendingTimers(h)).toBe(1);
    for (const client of open) client.close();
    await vi.waitFor(() => expect(streamsOpen(h)).toBe(0), patient);
    expect(pendingTimers(h)).toBe(0);
  });

  it('checks the API key before the stream opens: 401 JSON', async () => {
    const { h, url } = await start({ env: { API_KEY: 'k1' } });
    for (const [headers, detail] of [
      [{}, 'missing X-API-Key header'],
      [{ 'X-API-Key': 'wrong' }, 'invalid API key'],
    ] as const) {
      const res = await fetch(`${url}/api/activity/stream`, { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toEqual({ detail });
    }
    expect(streamsOpen(h)).toBe(0);
    const client = await stream(url, '/api/activity/stream', { 'X-API-Key': 'k1' });
    expect(client.response.status).toBe(200);
  });

  it('answers 503 {detail} with Retry-After past SSE_MAX_STREAMS, and opens again once one closes', async () => {
    const { h, url } = await start({ env: { SSE_MAX_STREAMS: '2' } });
    const first = await stream(url);
    await stream(url);
    const refused = await fetch(`${url}/api/activity/stream`);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(await refused.json()).toEqual({ detail: 'too many activity streams open (at most 2); retry later' });
    first.close();
    await vi.waitFor(() => expect(streamsOpen(h)).toBe(1), patient);
    const third = await stream(url);
    expect(third.response.status).toBe(200);
  });
});

describe('GET /api/activity/stream: shutdown', () => {
  it('beginning shutdown ends every stream cleanly and refuses new ones', async () => {
    const { h, url, server } = await start();
    const clientsOpen = await Promise.all([stream(url), stream(url, '/api/activity/stream?session_id=s1')]);
    await Promise.all(clientsOpen.map((c) => c.until((x) => x.retry !== undefined)));
    const closing = server.close(5000);
    expect(await Promise.all(clientsOpen.map((c) => c.finished))).toEqual(['end', 'end']);
    await closing;
    expect(h.app.activityStreams.stats()).toEqual({
      streams: 0,
      subscribed: false,
      heartbeatArmed: false,
      bufferedBytes: 0,
      kernelBytes: 0,
      pendingFanouts: 0,
    });
    expect(
      h.logs
        .parsed()
        .filter((line) => line.msg === 'activity stream closed')
        .map((line) => line.reason),
    ).toEqual(['shutdown', 'shutdown']);
    const requestLines = h.logs
      .parsed()
      .filter(
        (line) =>
          line.msg === 'request completed' && (line.req as { url?: string }).url?.startsWith('/api/activity/stream'),
      );
    expect(requestLines.map((line) => (line.res as { statusCode: number }).statusCode)).toEqual([200, 200]);
  });
});

describe('GET /api/activity/stream: under an event flood', () => {
  it('writes an item to at most WRITES_PER_TURN streams in one turn of the event loop, the rest in the turns after, in order', async () => {
    const { h, server } = await start();
    const served: Socket[] = [];
    server.server.on('connection', (socket: Socket) => served.push(socket));
    const readers = 450;
    const received = new Array<string>(readers).fill('');
    for (let i = 0; i < readers; i += 1) {
      const socket = connect(server.port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.on('data', (chunk: Buffer) => (received[i] += chunk.toString()));
      socket.write('GET /api/activity/stream HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n');
      cleanupSockets.push(socket);
    }
    await vi.waitFor(() => expect(streamsOpen(h)).toBe(readers), { timeout: 15_000 });
    const before = new Map(served.map((socket) => [socket, socket.bytesWritten]));
    let writtenInItsTurn = -1;
    // Subscribed after the hub: called in the same turn, right after the hub took the item.
    const probe = h.system.activityActor.subscribe('probe', () => {
      writtenInItsTurn = served.filter((socket) => socket.bytesWritten > before.get(socket)!).length;
    });
    record(h, 2, { payload: { n: 'flood' } });
    await vi.waitFor(() => expect(writtenInItsTurn).toBeGreaterThanOrEqual(0), patient);
    probe.unsubscribe();
    expect(writtenInItsTurn).toBe(WRITES_PER_TURN);
    // Every reader gets both items, the first before the second.
    const [first, second] = activityIds(h, 1, 2);
    await vi.waitFor(() => expect(received.every((text) => text.includes(`id: ${second}\n`))).toBe(true), {
      timeout: 15_000,
    });
    expect(received.every((text) => text.indexOf(`id: ${first}\n`) < text.indexOf(`id: ${second}\n`))).toBe(true);
    expect(h.app.activityStreams.stats().pendingFanouts).toBe(0);
  }, 30_000);

  it('counts what the kernel holds unread for a reader that stopped reading, and cuts it at SSE_MAX_BUFFER_BYTES although node itself holds less', async () => {
    // Linux's tables only (kernel-send-queues.ts); the cap at its smallest.
    const { h, server } = await start({ env: { SSE_MAX_BUFFER_BYTES: '65536' } });
    const cap = h.config.stream.maxBufferBytes;
    const { socket } = await stalledReader(server.port);
    await vi.waitFor(() => expect(streamsOpen(h)).toBe(1), patient);
    const blob = 'x'.repeat(8 * 1024);
    let recorded = 0;
    // The kernel alone takes megabytes from a loopback reader that stopped (its buffers grow to
    // fit): counted only as node's, this stream would take all of a megabyte without a cut.
    while (streamsOpen(h) > 0 && recorded < 128) {
      record(h, 1, { payload: { blob } });
      recorded += 1;
      await new Promise((resolve) => setTimeout(resolve, 25));
      const stats = h.app.activityStreams.stats();
      if (stats.streams > 0) expect(stats.bufferedBytes).toBeGreaterThanOrEqual(stats.kernelBytes);
    }
    expect(streamsOpen(h)).toBe(0);
    expect(recorded * blob.length).toBeLessThan(1024 * 1024);
    expect(recorded * blob.length).toBeGreaterThan(cap / 2);
    const cut = h.logs.parsed().find((line) => line.msg === 'activity stream cut: client not reading');
    // Cut for what the kernel held: node's own queue was below the cap.
    expect(cut).toMatchObject({ kernel_bytes: expect.any(Number), node_bytes: expect.any(Number) });
    expect(cut!.kernel_bytes as number).toBeGreaterThan(0);
    expect(cut!.node_bytes as number).toBeLessThan(cap);
    socket.destroy();
  }, 30_000);
});

const cleanupSockets: Socket[] = [];
afterEach(() => {
  for (const socket of cleanupSockets.splice(0)) socket.destroy();
});
