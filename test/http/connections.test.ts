import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RunningServer } from '../../src/http/server.js';
import type { Harness } from '../support/harness.js';
import { createHarness, serve } from '../support/harness.js';
import { rawSocket } from '../support/raw-socket.js';
import { startLiveKitStandIn } from '../support/livekit-stand-in.js';

// Runs on one store: timeouts, caps and the parser's refusals are the HTTP server's, before any store; vitest.config.ts.

/** Generous bounds for a loaded machine: what is tested is seconds instead of minutes. */
const patient = { timeout: 15_000, interval: 50 };

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function start(
  env: Record<string, string>,
): Promise<{ server: RunningServer; counts: () => Record<string, number>; h: Harness }> {
  const h = createHarness({ env });
  const server = await serve(h);
  cleanups.push(() => server.close(0));
  return { server, counts: () => h.app.connections.snapshot(), h };
}

describe('request timeouts (REQUEST_TIMEOUT_SECONDS)', () => {
  it('a body trickled slower than the timeout is answered 408 and the connection closed, in seconds', async () => {
    const { server } = await start({ REQUEST_TIMEOUT_SECONDS: '1' });
    const { socket, text, closed } = rawSocket(server.port, cleanups);
    socket.write(
      'POST /v1/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"se',
    );
    const trickle = setInterval(() => socket.write(' '), 300);
    cleanups.push(() => clearInterval(trickle));
    await closed;
    expect(text()).toMatch(/^HTTP\/1\.1 408 /);
  }, 20_000);

  it('headers trickled slower than the timeout are cut, in seconds', async () => {
    const { server } = await start({ REQUEST_TIMEOUT_SECONDS: '1' });
    const { socket, closed } = rawSocket(server.port, cleanups);
    socket.write('GET /api/features HTTP/1.1\r\nHost: localhost\r\n');
    const trickle = setInterval(() => socket.write('X-A: b\r\n'), 300);
    cleanups.push(() => clearInterval(trickle));
    await closed;
  }, 20_000);
});

/** The JSON body of a raw HTTP response, once the server has closed the connection. */
function bodyOf(raw: string): unknown {
  return JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
}

describe("what Node's HTTP parser refuses is answered {detail} too", () => {
  it('a malformed request line gets 400 with a detail', async () => {
    const { server } = await start({});
    const { socket, text, closed } = rawSocket(server.port, cleanups);
    socket.write('GARBAGE\r\n\r\n');
    await closed;
    expect(text()).toMatch(/^HTTP\/1\.1 400 /);
    expect(text()).toMatch(/content-type: application\/json/i);
    expect(bodyOf(text())).toEqual({ detail: expect.stringContaining('malformed HTTP request') });
  });

  it('a 20 KB URL gets 431 with a detail', async () => {
    const { server } = await start({});
    const { socket, text, closed } = rawSocket(server.port, cleanups);
    socket.write(`GET /api/sessions?x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    await closed;
    expect(text()).toMatch(/^HTTP\/1\.1 431 /);
    expect(bodyOf(text())).toEqual({ detail: expect.stringContaining('too large') });
  });

  it('a request too slow to arrive gets 408 with a detail', async () => {
    const { server } = await start({ REQUEST_TIMEOUT_SECONDS: '1' });
    const { socket, text, closed } = rawSocket(server.port, cleanups);
    socket.write(
      'POST /v1/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"se',
    );
    await closed;
    expect(text()).toMatch(/^HTTP\/1\.1 408 /);
    expect(bodyOf(text())).toEqual({ detail: expect.stringContaining('REQUEST_TIMEOUT_SECONDS') });
  }, 20_000);
});

describe('connection caps (MAX_CONNECTIONS)', () => {
  it('drops connections past the cap, and takes new ones again once one closes', async () => {
    const { server, counts } = await start({ MAX_CONNECTIONS: '2' });
    const first = rawSocket(server.port, cleanups);
    const second = rawSocket(server.port, cleanups);
    await vi.waitFor(() => expect(counts().http).toBe(2), patient);
    const third = rawSocket(server.port, cleanups);
    await third.closed;
    expect(third.text()).toBe('');
    expect(counts().http).toBe(2);

    first.socket.destroy();
    await vi.waitFor(() => expect(counts().http).toBe(1), patient);
    const res = await fetch(`${server.url}/api/features`, { headers: { connection: 'close' } });
    expect(res.status).toBe(200);
    second.socket.destroy();
  });

  it('counts event streams apart: open streams leave request connections free, and have their own cap', async () => {
    const { server, counts } = await start({ MAX_CONNECTIONS: '2', SSE_MAX_STREAMS: '2' });
    const streams = [rawSocket(server.port, cleanups), rawSocket(server.port, cleanups)];
    for (const stream of streams)
      stream.socket.write('GET /api/activity/stream HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n');
    await vi.waitFor(() => expect(counts()).toEqual({ http: 0, sse: 2, websocket: 0 }), patient);
    // Two streams open, and still two request connections to be had.
    const plain = await Promise.all(
      [0, 1].map(() => fetch(`${server.url}/api/features`, { headers: { connection: 'close' } })),
    );
    expect(plain.map((res) => res.status)).toEqual([200, 200]);
    const third = await fetch(`${server.url}/api/activity/stream`, { headers: { connection: 'close' } });
    expect(third.status).toBe(503);
    expect(third.headers.get('retry-after')).toBe('5');
    // A stream that ends gives its connection back to requests.
    streams[0]!.socket.destroy();
    await vi.waitFor(() => expect(counts().sse).toBe(1), patient);
  });
});

describe('connections without a key give way (MAX_UNAUTHENTICATED_PER_CLIENT, MAX_CONNECTIONS)', () => {
  /** Slow connections that never finish a request: what a flood without a key holds open. */
  async function flood(port: number, count: number, counts: () => Record<string, number>) {
    const sockets: ReturnType<typeof rawSocket>[] = [];
    for (let i = 0; i < count; i += 1) {
      const raw = rawSocket(port, cleanups);
      raw.socket.write('GET /api/features HTTP/1.1\r\nHost: localhost\r\n');
      sockets.push(raw);
      // One at a time: the port's listening sockets take connections in no set order
      // (src/http/acceptors.ts), and the oldest is the first admitted.
      await vi.waitFor(() => expect(counts().http).toBe(i + 1), patient);
    }
    return sockets;
  }

  it('/health and a keyed client are served while keyless slow connections fill MAX_CONNECTIONS; the oldest of those is cut for them', async () => {
    const { server, counts, h } = await start({ MAX_CONNECTIONS: '6', API_KEY: 'k1' });
    const slow = await flood(server.port, 6, counts);
    // Past their grace, the slow connections give way to newcomers, oldest first.
    h.clock.increment(1000);
    const health = await fetch(`${server.url}/health`, { headers: { connection: 'close' } });
    expect(health.status).toBe(200);
    await slow[0]!.closed;
    expect(slow.slice(1).map(({ socket }) => socket.destroyed)).toEqual([false, false, false, false, false]);
    const keyed = await fetch(`${server.url}/api/features`, { headers: { 'x-api-key': 'k1', connection: 'close' } });
    expect(keyed.status).toBe(200);
  });

  it('one client holds at most MAX_UNAUTHENTICATED_PER_CLIENT connections without a key: its next one takes the place of its oldest', async () => {
    const { server, counts, h } = await start({ MAX_UNAUTHENTICATED_PER_CLIENT: '3', API_KEY: 'k1' });
    const slow = await flood(server.port, 3, counts);
    h.clock.increment(1000);
    const fourth = rawSocket(server.port, cleanups);
    await slow[0]!.closed;
    await vi.waitFor(() => expect(counts().http).toBe(3), patient);
    expect(fourth.socket.destroyed).toBe(false);
  });

  it('a connection without a key gives way before one that showed its key; a burst of new connections within their grace is refused instead', async () => {
    const { server, counts, h } = await start({ MAX_CONNECTIONS: '2', API_KEY: 'k1' });
    const keyed = rawSocket(server.port, cleanups);
    keyed.socket.write('GET /api/features HTTP/1.1\r\nHost: localhost\r\nX-API-Key: k1\r\n\r\n');
    await vi.waitFor(() => expect(keyed.text()).toMatch(/^HTTP\/1\.1 200 /), patient);
    const slow = rawSocket(server.port, cleanups);
    await vi.waitFor(() => expect(counts().http).toBe(2), patient);
    // Within its grace: the newcomer is refused, the slow connection kept.
    const early = rawSocket(server.port, cleanups);
    await early.closed;
    h.clock.increment(1000);
    const late = rawSocket(server.port, cleanups);
    await slow.closed;
    expect(late.socket.destroyed).toBe(false);
    expect(keyed.socket.destroyed).toBe(false);
  });

  it('keyed connections trickling bodies give way too: the one whose request began longest ago is cut for a fresh keyed client', async () => {
    const { server, counts, h } = await start({ MAX_CONNECTIONS: '3', API_KEY: 'k1', REQUEST_TIMEOUT_SECONDS: '60' });
    const trickling = [];
    for (let i = 0; i < 3; i += 1) {
      const client = rawSocket(server.port, cleanups);
      client.socket.write(
        'POST /v1/events HTTP/1.1\r\nHost: localhost\r\nX-API-Key: k1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"se',
      );
      await vi.waitFor(() => expect(h.app.requestBodies.use().bodies).toBe(i + 1), patient);
      trickling.push(client);
      h.clock.increment(400);
    }
    expect(counts().http).toBe(3);
    h.clock.increment(1000);
    const fresh = await fetch(`${server.url}/api/features`, { headers: { 'x-api-key': 'k1', connection: 'close' } });
    expect(fresh.status).toBe(200);
    await trickling[0]!.closed;
    expect(trickling.slice(1).map(({ socket }) => socket.destroyed)).toEqual([false, false]);
  });
});

describe('shutdown with a request under way', () => {
  it('its response still comes, with Connection: close, and then the connection closes and the server with it', async () => {
    const lk = await startLiveKitStandIn();
    cleanups.push(() => lk.close());
    const h = createHarness({ env: { ...lk.env(), MEDIA_REQUEST_TIMEOUT_SECONDS: '3' } });
    const server = await serve(h);
    const held = lk.holdNext('CreateRoom');
    const client = rawSocket(server.port, cleanups);
    const body = JSON.stringify({ session_id: 's1', screen: 'pan_details' });
    client.socket.write(
      `POST /v1/assistant/session/start HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    await held.arrived;
    const closed = server.close(30_000);
    held.release();
    await client.closed;
    expect(client.text()).toMatch(/^HTTP\/1\.1 200 /);
    expect(client.text()).toMatch(/\r\nConnection: close\r\n/i);
    await closed;
  }, 20_000);

  it('waits for every response under way, on whichever listening socket its connection came in (src/http/acceptors.ts)', async () => {
    const lk = await startLiveKitStandIn();
    cleanups.push(() => lk.close());
    const h = createHarness({ env: { ...lk.env(), MEDIA_REQUEST_TIMEOUT_SECONDS: '3', HTTP_ACCEPTORS: '8' } });
    const server = await serve(h);
    // Four connections over eight listening sockets: all four come in on the server's own socket once in 4,096 runs.
    const holds = Array.from({ length: 4 }, () => lk.holdNext('CreateRoom'));
    const clients = holds.map((_, index) => {
      const client = rawSocket(server.port, cleanups);
      const body = JSON.stringify({ session_id: `s${index}`, screen: 'pan_details' });
      client.socket.write(
        `POST /v1/assistant/session/start HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      );
      return client;
    });
    await Promise.all(holds.map((held) => held.arrived));
    let resolved = false;
    const closed = server.close(30_000).then(() => (resolved = true));
    // Long enough for a close that does not wait to resolve: it needs no more than a few turns.
    await new Promise((done) => setTimeout(done, 300));
    expect(resolved).toBe(false);
    for (const held of holds) held.release();
    await Promise.all(clients.map((client) => client.closed));
    for (const client of clients) expect(client.text()).toMatch(/^HTTP\/1\.1 200 /);
    await closed;
  }, 20_000);
});
