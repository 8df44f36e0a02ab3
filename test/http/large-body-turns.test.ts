// Runs on one store: the turn a body is read in is the HTTP layer's, before any store; vitest.config.ts.
import { AsyncLocalStorage } from 'node:async_hooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { TurnTimer } from '../../src/http/large-body-turns.js';
import { LARGE_BODY_BYTES, LargeBodyTurns, MAX_REST_MS } from '../../src/http/large-body-turns.js';
import type { RunningServer } from '../../src/http/server.js';
import type { Harness } from '../support/harness.js';
import { createHarness, serve } from '../support/harness.js';
import { rawSocket } from '../support/raw-socket.js';
import { WsClient } from '../support/ws-client.js';

// Large bodies are worked on one per turn of the event loop (src/http/large-body-turns.ts,
// docs/decisions/0041-large-bodies-take-turns.md).

const patient = { timeout: 15_000, interval: 10 };
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Counts turns of the event loop: one `setImmediate` a turn, rescheduled from itself. */
function turnCounter(): { now: () => number } {
  let turns = 0;
  let running = true;
  const tick = () => {
    turns += 1;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  cleanups.push(() => (running = false));
  return { now: () => turns };
}

describe('LargeBodyTurns', () => {
  it('runs what is given together one task a turn, in the order given, each in its caller’s async context', async () => {
    const turns = new LargeBodyTurns();
    const counter = turnCounter();
    const context = new AsyncLocalStorage<string>();
    const ran: { name: string; turn: number; context: string | undefined }[] = [];
    const all = ['a', 'b', 'c', 'd'].map(
      (name) =>
        new Promise<void>((resolve) =>
          context.run(`request ${name}`, () =>
            turns.take(() => {
              ran.push({ name, turn: counter.now(), context: context.getStore() });
              resolve();
            }),
          ),
        ),
    );
    expect(turns.queued).toBe(4);
    await Promise.all(all);
    expect(ran.map(({ name }) => name)).toEqual(['a', 'b', 'c', 'd']);
    expect(ran.map(({ context: store }) => store)).toEqual(['request a', 'request b', 'request c', 'request d']);
    const seen = ran.map(({ turn }) => turn);
    expect(new Set(seen).size).toBe(4);
    expect(seen).toEqual([...seen].sort((x, y) => x - y));
    expect(turns.queued).toBe(0);
  });

  it('lets the next task wait as long as the last one took, up to MAX_REST_MS: large bodies get at most half the loop', async () => {
    // A simulated clock: each task takes what it says; a rest is recorded, then run at the next turn.
    let now = 1_000;
    const rests: { at: number; ms: number }[] = [];
    const timer: TurnTimer = {
      now: () => now,
      after: (run, ms) => {
        rests.push({ at: now, ms });
        now += ms;
        setImmediate(run);
      },
    };
    const turns = new LargeBodyTurns(timer);
    const ran: { name: string; at: number }[] = [];
    const task = (name: string, takesMs: number) =>
      new Promise<void>((resolve) =>
        turns.take(() => {
          ran.push({ name, at: now });
          now += takesMs;
          resolve();
        }),
      );
    await Promise.all([task('a', 40), task('b', 250), task('c', 10), task('d', 5)]);
    // The first runs at once; each after it rests as long as the one before took, 250 ms cut to MAX_REST_MS.
    expect(rests.map(({ ms }) => ms)).toEqual([40, MAX_REST_MS, 10]);
    expect(ran).toEqual([
      { name: 'a', at: 1_000 },
      { name: 'b', at: 1_080 },
      { name: 'c', at: 1_430 },
      { name: 'd', at: 1_450 },
    ]);
    // Given once the rest is over, a task runs at the next turn without a timer.
    now += 5;
    await task('e', 1);
    expect(rests).toHaveLength(3);
    expect(ran.at(-1)).toEqual({ name: 'e', at: 1_460 });
  });
});

const KEY = 'k1';

async function start(): Promise<{ server: RunningServer; h: Harness }> {
  const h = createHarness({ env: { API_KEY: KEY } });
  const server = await serve(h);
  cleanups.push(() => server.close(0));
  return { server, h };
}

/** A keyed event of `bytes` or so, as raw HTTP with the Content-Type given. */
function request(sessionId: string, bytes: number, contentType: string): string {
  const body = JSON.stringify({
    session_id: sessionId,
    event: 'component_input',
    screen: 'pan_details',
    properties: { note: 'n'.repeat(Math.max(0, bytes - 100)) },
  });
  return (
    `POST /v1/events HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${KEY}\r\nX-Request-ID: ${sessionId}\r\n` +
    `Content-Type: ${contentType}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/**
 * Sends each request but its last byte, waits until the service is reading all of them, then
 * sends every last byte in one go: the bodies end in the same turn of the service's event loop.
 * Records, by request id, the turn each body was read in (its charge released, as the body is
 * handed on), and how many bodies were still charged then.
 */
async function endTogether(
  server: RunningServer,
  h: Harness,
  requests: [requestId: string, raw: string][],
): Promise<Map<string, { turn: number; charged: number }>> {
  const counter = turnCounter();
  const read = new Map<string, { turn: number; charged: number }>();
  const bodies = h.app.requestBodies;
  const close = bodies.close.bind(bodies);
  bodies.close = (line) => {
    const id = line.req.headers['x-request-id'];
    if (typeof id === 'string' && line.open) read.set(id, { turn: counter.now(), charged: bodies.use().bodies });
    close(line);
  };
  cleanups.push(() => (bodies.close = close));
  const clients = requests.map(([, raw]) => {
    const client = rawSocket(server.port, cleanups);
    client.socket.write(raw.slice(0, -1));
    return client;
  });
  await vi.waitFor(() => expect(h.app.requestBodies.use().bodies).toBe(requests.length), patient);
  requests.forEach(([, raw], index) => clients[index]!.socket.write(raw.slice(-1)));
  await Promise.all(clients.map((client) => client.closed));
  for (const client of clients) expect(client.text()).toMatch(/^HTTP\/1\.1 200 /);
  return read;
}

describe('large bodies take turns', () => {
  for (const [path, contentType] of [
    ['read directly', 'application/json'],
    ['read by body-parser', 'application/json; charset="utf-8"'],
  ] as const) {
    it(`large bodies (${path}) that end in the same turn are read in turns of their own, charged while they wait`, async () => {
      const { server, h } = await start();
      const large = ['large-1', 'large-2', 'large-3', 'large-4'];
      const read = await endTogether(server, h, [
        ...large.map((id) => [id, request(id, LARGE_BODY_BYTES + 2_000, contentType)] as [string, string]),
        ['small', request('small', 300, contentType)],
      ]);
      const turns = large.map((id) => read.get(id)!.turn);
      expect(new Set(turns).size).toBe(large.length);
      // The small body is not queued behind them: read no later than the first large one.
      expect(read.get('small')!.turn).toBeLessThanOrEqual(Math.min(...turns));
      // Whatever waits for its turn is still charged: when the first large body is read, the others are.
      const first = large.reduce((a, b) => (read.get(a)!.turn <= read.get(b)!.turn ? a : b));
      expect(read.get(first)!.charged).toBeGreaterThanOrEqual(large.length - 1);
      expect(h.app.requestBodies.use()).toMatchObject({ used_bytes: 0, bodies: 0 });
    });
  }
});

describe('large frames take turns', () => {
  it('a large control_state frame and the small ones sent after it are answered in the order sent', async () => {
    const h = createHarness();
    const server = await serve(h);
    cleanups.push(() => server.close(0));
    const ws = await WsClient.open(`${server.url.replace('http', 'ws')}/v1/events/ws`);
    cleanups.push(() => ws.close());
    const session = '7664f88e-4980-41c3-bec0-f0e1591ee548';
    ws.send({ type: 'connect', message_id: 'm0', session_id: session, user_id: 'u', client_id: 'kycis_demo' });
    await ws.nextOfType('ack');
    const frame = (id: string, extra: Record<string, unknown> = {}) => ({
      type: 'control_state',
      message_id: id,
      session_id: session,
      event: 'screen_state',
      screen: 'pan_details',
      ...extra,
    });
    ws.send(frame('c1', { detail: 'n'.repeat(LARGE_BODY_BYTES + 1_000) }));
    ws.send(frame('c2'));
    ws.send(frame('c3', { screen: 'selfie' }));
    await ws.nextOfType('ack', (f) => f.message_id === 'c3');
    const acks = ws.frames.filter((f) => f.type === 'ack' && f.message_id !== 'm0').map((f) => f.message_id);
    expect(acks).toEqual(['c1', 'c2', 'c3']);
    // The last frame sent is the session's newest state.
    expect(((await h.http.get(`/api/sessions/${session}`)).body as { screen: string }).screen).toBe('selfie');
  });
});
