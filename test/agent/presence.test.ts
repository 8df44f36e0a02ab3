import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Timers } from '../../agent/context-source.js';
import { Presence } from '../../agent/presence.js';

/** Timers that run only when the test says: each `after` is recorded with its delay. */
function manualTimers() {
  const entries: { ms: number; run: () => void; state: 'pending' | 'fired' | 'cancelled' }[] = [];
  const waiters: (() => void)[] = [];
  const timers: Timers = {
    now: () => 0,
    after(ms, run) {
      const entry = { ms, run, state: 'pending' as 'pending' | 'fired' | 'cancelled' };
      entries.push(entry);
      for (const wake of waiters.splice(0)) wake();
      return () => {
        if (entry.state === 'pending') entry.state = 'cancelled';
      };
    },
  };
  const next = () => entries.find((entry) => entry.state === 'pending');
  return {
    timers,
    /** Waits for a timer to be set, runs it, and says its delay. */
    async fireNext(): Promise<number> {
      while (!next()) await new Promise<void>((resolve) => waiters.push(resolve));
      const entry = next()!;
      entry.state = 'fired';
      entry.run();
      return entry.ms;
    },
    live: () => entries.filter((entry) => entry.state === 'pending').length,
  };
}

/** A service that answers each presence request with `answer`, recording the requests. */
async function presenceService(answer: (res: ServerResponse, index: number) => void) {
  const requests: IncomingMessage[] = [];
  const arrivals: (() => void)[] = [];
  const server = createServer((req, res) => {
    requests.push(req);
    for (const wake of arrivals.splice(0)) wake();
    answer(res, requests.length);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    async arrival(count: number): Promise<IncomingMessage> {
      while (requests.length < count) await new Promise<void>((resolve) => arrivals.push(resolve));
      return requests[count - 1]!;
    },
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const present = (res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write('event: present\ndata: {}\n\n');
};

describe("the job's presence connection (agent/presence.ts)", () => {
  it('is held with the API key and the identity, opened again at once when the service drops it, and closed for good on close()', async () => {
    const service = await presenceService((res, index) => {
      present(res);
      // The first connection is dropped by the service (a restart, a proxy): the job opens another.
      if (index === 1) res.end();
    });
    closers.push(service.close);
    const clock = manualTimers();
    const identity = 'agent-AJ_1';
    const presence = new Presence({
      serviceUrl: `${service.url}/`,
      apiKey: 'k',
      sessionId: 's 1',
      identity,
      timers: clock.timers,
      log: () => undefined,
    });
    presence.start();
    const first = await service.arrival(1);
    expect(first.url).toBe('/v1/assistant/presence/s%201?identity=agent-AJ_1');
    expect(first.headers['x-api-key']).toBe('k');
    // Within the service's 2 s grace: the first retry after 100 ms.
    expect(await clock.fireNext()).toBe(100);
    const second = await service.arrival(2);
    // Held once the job has read the service's `present` message.
    await vi.waitFor(() => expect(presence.held).toBe(2));
    const closed = new Promise<void>((resolve) => second.socket.once('close', () => resolve()));
    presence.close();
    await closed;
    expect(clock.live()).toBe(0);
    expect(service.requests).toHaveLength(2);
  });

  it('refused (a service that does not know the session yet): tried again with growing delays, none past a second', async () => {
    const service = await presenceService((res) =>
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"not found"}'),
    );
    closers.push(service.close);
    const clock = manualTimers();
    const logged: string[] = [];
    const log = (message: string) => void logged.push(message);
    const presence = new Presence({
      serviceUrl: service.url,
      apiKey: undefined,
      sessionId: 's1',
      identity: 'agent-1',
      timers: clock.timers,
      log,
    });
    presence.start();
    const delays: number[] = [];
    for (let attempt = 1; attempt <= 5; attempt += 1) {
      await service.arrival(attempt);
      delays.push(await clock.fireNext());
    }
    await service.arrival(6);
    presence.close();
    expect(delays).toEqual([100, 250, 500, 1_000, 1_000]);
    expect(service.requests[0]!.headers['x-api-key']).toBeUndefined();
    expect(logged).toContain('presence connection refused');
    expect(presence.held).toBe(0);
  });
});
