/**
 * The attack mixes `npm run test:flood` runs after its sessions and streams (scripts/flood.ts),
 * each beside a fresh keyed client that must be answered within a second once the service has
 * taken the attack's connections in (docs/reference/limits.md, "The floods, as `npm start` runs"):
 *
 * - stalled readers and an event flood: activity streams and WebSockets, all keyed, that stop
 *   reading (the sockets reconnecting every few seconds), while eight clients post 60 KB events
 *   dense with keys;
 * - slow bodies: keyed connections that each send all but a thousand bytes of a 65,000-byte body,
 *   then a byte every 3 s;
 * - unread pages: keyed connections that each ask for eight activity pages of 1,000 items in one
 *   write and read nothing.
 */
import type { Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';

export interface Target {
  port: number;
  apiKey: string;
}

/** A fresh keyed client's requests, each on a new connection, every half second in a thread of its own (so the attack's own event loop cannot delay them). */
export interface FreshClient {
  /**
   * Stops, and gives each request's time in ms (Infinity for one that failed or got no 200), when
   * each was sent (epoch ms: a worker's performance clock has an origin of its own), and what each
   * failure was.
   */
  stop(): Promise<FreshAnswers>;
}

export interface FreshAnswers {
  times: number[];
  sentAt: number[];
  failures: string[];
}

const FRESH_CLIENT = `
const { parentPort, workerData } = require('node:worker_threads');
const { port, apiKey } = workerData;
const times = [];
const sentAt = [];
const failures = [];
let stopped = false;
parentPort.on('message', () => { stopped = true; });
(async () => {
  for (let n = 0; !stopped; n += 1) {
    const started = performance.now();
    sentAt.push(Date.now());
    try {
      const res = await fetch('http://127.0.0.1:' + port + '/v1/events', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey, connection: 'close' },
        body: JSON.stringify({ session_id: 'fresh-' + n, event: 'component_input', screen: 'pan_details' }),
        signal: AbortSignal.timeout(5000),
      });
      await res.arrayBuffer();
      times.push(res.status === 200 ? performance.now() - started : Infinity);
      if (res.status !== 200) failures.push('at ' + n / 2 + ' s: ' + res.status);
    } catch (error) {
      times.push(Infinity);
      failures.push('at ' + n / 2 + ' s: ' + (error.cause?.code ?? error.name));
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  parentPort.postMessage({ times, sentAt, failures });
})();
`;

export function freshClient(target: Target): FreshClient {
  const worker = new Worker(FRESH_CLIENT, { eval: true, workerData: target });
  const done = new Promise<FreshAnswers>((resolve) => worker.once('message', resolve));
  return {
    stop: async () => {
      worker.postMessage('stop');
      const answers = await done;
      await worker.terminate();
      return answers;
    },
  };
}

/** `/health/live` asked every 50 ms in a thread of its own, as a load balancer's probe would ask it. */
export interface LivenessProbe {
  /** Stops, and gives each probe's time in ms (Infinity for one that failed or got no 200). */
  stop(): Promise<number[]>;
}

const LIVENESS_PROBE = `
const { parentPort, workerData } = require('node:worker_threads');
const times = [];
let stopped = false;
parentPort.on('message', () => { stopped = true; });
(async () => {
  while (!stopped) {
    const started = performance.now();
    try {
      const res = await fetch('http://127.0.0.1:' + workerData.port + '/health/live', { signal: AbortSignal.timeout(10000) });
      await res.arrayBuffer();
      times.push(res.status === 200 ? performance.now() - started : Infinity);
    } catch {
      times.push(Infinity);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  parentPort.postMessage(times);
})();
`;

/**
 * The probe runs in a worker thread: measured from the flood's own event loop, which runs the
 * 64 requests at a time, a probe's time would include the turns the flood's client takes.
 */
export function livenessProbe(target: Pick<Target, 'port'>): LivenessProbe {
  const worker = new Worker(LIVENESS_PROBE, { eval: true, workerData: target });
  const done = new Promise<number[]>((resolve) => worker.once('message', resolve));
  return {
    stop: async () => {
      worker.postMessage('stop');
      const times = await done;
      await worker.terminate();
      return times;
    },
  };
}

function raw(target: Target): Socket {
  const socket = connect(target.port, '127.0.0.1');
  socket.on('error', () => undefined);
  return socket;
}

/** An activity stream opened with the key whose client never reads. */
export function stalledStream(target: Target): Socket {
  const socket = raw(target);
  socket.write(
    `GET /api/activity/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${target.apiKey}\r\nAccept: text/event-stream\r\n\r\n`,
  );
  socket.pause();
  return socket;
}

/** A client's text frame (masked, as RFC 6455 asks of clients; the mask is zero). */
function frame(text: string): Buffer {
  const payload = Buffer.from(text);
  const header =
    payload.length < 126
      ? Buffer.from([0x81, 0x80 | payload.length])
      : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff]);
  return Buffer.concat([header, Buffer.alloc(4), payload]);
}

/** A keyed WebSocket that connects to its session and sends a heartbeat at each `beat`, and never reads the answers. */
export function stalledSocket(target: Target, n: number): { socket: Socket; beat(): void } {
  const socket = raw(target);
  socket.write(
    'GET /v1/events/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
      `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nX-API-Key: ${target.apiKey}\r\n\r\n`,
  );
  socket.write(frame(JSON.stringify({ type: 'connect', session_id: `ws-${n}`, message_id: 'c' })));
  socket.pause();
  return { socket, beat: () => socket.writable && socket.write(frame('{"type":"heartbeat"}')) };
}

/** An event of about 60 KB whose properties are thousands of short keys (what costs the most to parse and redact per byte). */
export function keyDenseEvent(sessionId: string): string {
  const properties: Record<string, string> = {};
  for (let i = 0; i < 5_500; i += 1) properties[`k${i.toString(36)}`] = 'v';
  return JSON.stringify({ session_id: sessionId, event: 'component_input', screen: 'pan_details', properties });
}

/** A keyed connection that sends all but the last thousand bytes of a 65,000-byte body; `trickle` sends one more byte. */
export function slowBody(target: Target): { socket: Socket; trickle(): void } {
  const announced = 65_000;
  const socket = raw(target);
  const start = '{"session_id":"slow","event":"component_input","properties":{"pad":"';
  socket.write(
    `POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${target.apiKey}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${announced}\r\n\r\n${start}${'x'.repeat(announced - 1000 - start.length)}`,
  );
  socket.on('data', () => undefined);
  return { socket, trickle: () => socket.writable && socket.write('x') };
}

/** A keyed connection that asks for eight activity pages of 1,000 items in one write, as many as it may have under way, and never reads. */
export function unreadPages(target: Target): Socket {
  const socket = raw(target);
  socket.write(
    `GET /api/activity?limit=1000 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${target.apiKey}\r\n\r\n`.repeat(8),
  );
  socket.pause();
  return socket;
}

/**
 * What the kernel holds for the service's listening sockets on `port` that the service has not yet
 * accepted: the accept queues' lengths added up. For a listening socket, /proc/net/tcp's rx_queue is
 * its accept queue (Linux's `sk_ack_backlog`).
 */
export function acceptBacklog(port: number): number {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  let waiting = 0;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const [, local, , state, queues] = line.trim().split(/\s+/);
      if (state !== '0A' || !local?.endsWith(`:${hexPort}`)) continue;
      waiting += Number.parseInt(queues!.split(':')[1]!, 16);
    }
  }
  return waiting;
}

/** How long the accept queues must stay empty to count as drained, read every 100 ms. */
const DRAINED_FOR_MS = 500;
/** A service that has not taken in an attack's connections by then fails the flood. */
const DRAIN_LIMIT_MS = 60_000;

/**
 * Opens `count` of something, a hundred every 50 ms, then waits until the service has accepted
 * them all (its accept queues empty for half a second): what is judged is the service under the
 * attack, not a burst of thousands of handshakes at once into listen queues of 511. A fixed wait
 * was not enough on a loaded machine: the service was still accepting the slow bodies 1.5 s
 * after it, and a fresh client's connection waited in the same queues
 * (docs/reference/limits.md, "The floods, as `npm start` runs"). Returns what was opened and
 * when the service had taken it all in (epoch ms).
 */
export async function open<T>(
  port: number,
  count: number,
  make: (n: number) => T,
): Promise<{ made: T[]; takenInAt: number }> {
  const made: T[] = [];
  for (let n = 0; n < count; n += 1) {
    made.push(make(n));
    if (n % 100 === 99) await sleep(50);
  }
  const deadline = Date.now() + DRAIN_LIMIT_MS;
  let emptySince: number | undefined;
  for (;;) {
    const now = Date.now();
    if (acceptBacklog(port) > 0) emptySince = undefined;
    else emptySince ??= now;
    if (emptySince !== undefined && now - emptySince >= DRAINED_FOR_MS) return { made, takenInAt: emptySince };
    if (now > deadline)
      throw new Error(
        `flood: the service had not accepted ${count} connections ${DRAIN_LIMIT_MS / 1000} s after they were opened`,
      );
    await sleep(100);
  }
}
