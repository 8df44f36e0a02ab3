import { afterEach, describe, expect, it } from 'vitest';
import { MAX_PIPELINED, PIPELINED_DETAIL } from '../../src/http/pipelining.js';
import { createHarness, serve } from '../support/harness.js';
import { rawSocket } from '../support/raw-socket.js';

// Requests pipelined on one connection (src/http/pipelining.ts, docs/decisions/0045-pipelining-depth.md).

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const KEY = 'k1';

function event(sessionId: string): string {
  const body = JSON.stringify({ session_id: sessionId, event: 'component_input', screen: 'pan_details' });
  return (
    `POST /v1/events HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${KEY}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

const statuses = (text: string) => [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map(([, status]) => Number(status));

describe('pipelined requests', () => {
  it(`works on the first ${MAX_PIPELINED} under way on a connection, refuses the next with 429 and closes it; none after is applied`, async () => {
    const h = createHarness({ env: { API_KEY: KEY } });
    const server = await serve(h);
    cleanups.push(() => server.close(0));
    const sessions = Array.from({ length: 40 }, (_, n) => `pipe-${n}`);
    const client = rawSocket(server.port, cleanups);
    // Every request in one write, none waiting for an answer.
    client.socket.write(sessions.map(event).join(''));
    await client.closed;

    const text = client.text();
    expect(statuses(text)).toEqual([...Array<number>(MAX_PIPELINED).fill(200), 429]);
    expect(text).toContain('Connection: close');
    expect(JSON.parse(text.slice(text.lastIndexOf('\r\n\r\n') + 4))).toEqual({ detail: PIPELINED_DETAIL });
    // What was answered 200 is kept; what was refused or left unanswered was never worked on.
    for (const [n, sessionId] of sessions.entries())
      await h.http
        .get(`/api/sessions/${sessionId}`)
        .set('X-API-Key', KEY)
        .expect(n < MAX_PIPELINED ? 200 : 404);
  });

  it('answers a few pipelined requests in order and keeps the connection open', async () => {
    const h = createHarness();
    const server = await serve(h);
    cleanups.push(() => server.close(0));
    const client = rawSocket(server.port, cleanups);
    const live = 'GET /health/live HTTP/1.1\r\nHost: localhost\r\n\r\n';
    client.socket.write(live.repeat(3));
    await expect.poll(() => statuses(client.text()), { timeout: 5_000, interval: 10 }).toEqual([200, 200, 200]);
    expect(client.socket.destroyed).toBe(false);
    client.socket.write(live);
    await expect.poll(() => statuses(client.text()), { timeout: 5_000, interval: 10 }).toHaveLength(4);
  });
});
