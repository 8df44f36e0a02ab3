import { afterEach, describe, expect, it, vi } from 'vitest';
import { requestBodyBudgetBytes } from '../../src/actor-system/memory-budget.js';
import type { RunningServer } from '../../src/http/server.js';
import type { Harness } from '../support/harness.js';
import { createHarness, serve } from '../support/harness.js';
import { rawSocket } from '../support/raw-socket.js';

// The bodies still arriving are charged to their share of MEMORY_BUDGET_MB (src/http/request-bodies.ts, docs/reference/limits.md).

const patient = { timeout: 15_000, interval: 20 };
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const KEY = 'k1';
/** The smallest budget allowed: a share of 3.2 MiB, about 51 bodies of 65,000 bytes. */
const BUDGET_MB = 64;
const ANNOUNCED = 65_000;

async function start(): Promise<{ server: RunningServer; h: Harness }> {
  const h = createHarness({
    env: { API_KEY: KEY, MEMORY_BUDGET_MB: String(BUDGET_MB), REQUEST_TIMEOUT_SECONDS: '60' },
  });
  const server = await serve(h);
  cleanups.push(() => server.close(0));
  return { server, h };
}

/** A keyed event whose body stops a thousand bytes short of what it announced, as a slow-body flood sends it. */
function trickled(port: number) {
  const client = rawSocket(port, cleanups);
  const start = `{"session_id":"slow","event":"component_input","pad":"`;
  client.socket.write(
    `POST /v1/events HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${KEY}\r\nContent-Type: application/json\r\nContent-Length: ${ANNOUNCED}\r\n\r\n${start}${'x'.repeat(ANNOUNCED - 1000 - start.length)}`,
  );
  return client;
}

/**
 * `count` trickled bodies, one at a time, so that which came first is known; `each` runs once each
 * is charged or cut.
 */
async function trickledInTurn(server: RunningServer, h: Harness, count: number, each: () => void = () => undefined) {
  const slow = [];
  for (let i = 0; i < count; i += 1) {
    slow.push(trickled(server.port));
    await vi.waitFor(
      () => expect(h.app.requestBodies.use().bodies + h.app.requestBodies.use().cut).toBe(i + 1),
      patient,
    );
    each();
  }
  return slow;
}

describe('request bodies still arriving count against the memory budget', () => {
  it('a partial body is charged what it announced while it arrives, and released when its client leaves', async () => {
    const { server, h } = await start();
    const slow = trickled(server.port);
    await vi.waitFor(
      () => expect(h.app.requestBodies.use()).toMatchObject({ used_bytes: ANNOUNCED, bodies: 1 }),
      patient,
    );
    slow.socket.destroy();
    await vi.waitFor(() => expect(h.app.requestBodies.use()).toMatchObject({ used_bytes: 0, bodies: 0 }), patient);
  });

  it('a body read whole leaves nothing charged; one announced in chunks is charged as its chunks arrive', async () => {
    const { server, h } = await start();
    const whole = await fetch(`${server.url}/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify({ session_id: 'whole', event: 'component_input' }),
    });
    expect(whole.status).toBe(200);
    expect(h.app.requestBodies.use()).toMatchObject({ used_bytes: 0, bodies: 0 });
    const chunked = rawSocket(server.port, cleanups);
    chunked.socket.write(
      `POST /v1/events HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${KEY}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1388\r\n${'x'.repeat(5000)}\r\n`,
    );
    await vi.waitFor(() => expect(h.app.requestBodies.use()).toMatchObject({ used_bytes: 5000, bodies: 1 }), patient);
  });

  it(
    'keyed trickled bodies past the share: the ones arriving longest are cut, the charge never ' +
      'passes the share, and a fresh keyed client is served',
    async () => {
      const { server, h } = await start();
      const share = requestBodyBudgetBytes(BUDGET_MB);
      const fits = Math.floor(share / ANNOUNCED);
      const slow = await trickledInTurn(server, h, fits + 10, () =>
        expect(h.app.requestBodies.use().used_bytes).toBeLessThanOrEqual(share),
      );
      expect(h.app.requestBodies.use()).toMatchObject({ bodies: fits, cut: 10 });
      // The first ten gave way; the rest are still arriving.
      await Promise.all(slow.slice(0, 10).map(({ closed }) => closed));
      expect(slow.slice(10).every(({ socket }) => !socket.destroyed)).toBe(true);
      const fresh = await fetch(`${server.url}/v1/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': KEY, connection: 'close' },
        body: JSON.stringify({ session_id: 'fresh', event: 'component_input', pad: 'y'.repeat(60_000) }),
      });
      expect(fresh.status).toBe(200);
      expect(h.app.requestBodies.use().used_bytes).toBeLessThanOrEqual(share - ANNOUNCED);
    },
    30_000,
  );

  it('the bodies cut are told in one line an interval with their count, none in a line of its own', async () => {
    const { server, h } = await start();
    const fits = Math.floor(requestBodyBudgetBytes(BUDGET_MB) / ANNOUNCED);
    const slow = await trickledInTurn(server, h, fits + 6);
    await Promise.all(slow.slice(0, 6).map(({ closed }) => closed));
    // A client that leaves on its own is still logged as one: the service did not cut it.
    const left = trickled(server.port);
    await vi.waitFor(() => expect(h.app.requestBodies.use().cut).toBe(7), patient);
    slow.at(-1)!.socket.destroy();
    await vi.waitFor(() => expect(h.logs.parsed().filter((line) => line.msg === 'request aborted')).toHaveLength(1));
    const cutLines = () => h.logs.parsed().filter((line) => String(line.msg).startsWith('request bodies cut'));
    // The first cut is told at once; the six after it within the interval, when it ends.
    expect(cutLines().map((line) => line.cut_count)).toEqual([1]);
    h.clock.increment(9_999);
    expect(cutLines()).toHaveLength(1);
    h.clock.increment(1);
    expect(cutLines().map((line) => line.cut_count)).toEqual([1, 6]);
    expect(h.logs.parsed().filter((line) => line.msg === 'request aborted')).toHaveLength(1);
    left.socket.destroy();
  });
});
