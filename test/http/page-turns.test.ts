import { once } from 'node:events';
import type { Socket } from 'node:net';
import { connect } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RunningServer } from '../../src/http/server.js';
import { type Harness, createHarness, serve } from '../support/harness.js';

// Runs on one store: when a page is built is the HTTP layer's, not a store's; vitest.config.ts.

const running: RunningServer[] = [];
const clients: Socket[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.destroy();
  await Promise.all(running.splice(0).map((server) => server.close(100)));
});

/** A thousand items in the log: a page of them is the largest an operator may ask for. */
function fill(h: Harness): void {
  for (let i = 0; i < 1_000; i += 1) {
    h.system.activity.append({
      kind: 'event',
      at: h.clock.now(),
      session_id: `s-${i % 50}`,
      user_id: null,
      payload: { event: 'component_input', screen: 'pan_details', n: i },
      trace: { trace_id: 't', request_id: 'r' },
    });
  }
}

/** Counts the pages built: each is one listing of the log. */
function countPages(h: Harness): { built: number } {
  const pages = { built: 0 };
  const list = h.system.activity.list.bind(h.system.activity);
  h.system.activity.list = (query) => {
    pages.built += 1;
    return list(query);
  };
  return pages;
}

/** Eight asks for the largest page, in one write, and nothing read. */
const EIGHT_PAGES = 'GET /api/activity?limit=1000 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'.repeat(8);

const ONE_PAGE = 'GET /api/activity?limit=1000 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';

async function askAndNeverRead(port: number, asks = EIGHT_PAGES): Promise<Socket> {
  const client = connect(port, '127.0.0.1');
  client.on('error', () => undefined);
  clients.push(client);
  await once(client, 'connect');
  client.pause();
  await new Promise<void>((resolve) => client.write(asks, () => resolve()));
  return client;
}

async function fresh(port: number, path: string): Promise<number> {
  const client = connect(port, '127.0.0.1');
  clients.push(client);
  await once(client, 'connect');
  client.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
  const [head] = (await once(client, 'data')) as [Buffer];
  return Number(head.toString('latin1').split(' ')[1]);
}

describe('list pages take turns: a fresh client is served while pages queue', () => {
  it(
    'answers a probe sent after 16 clients asked for 128 pages of 1,000 items before most of them are built ' +
      '(built in the turns that read them, all 128 came first)',
    async () => {
      const h = createHarness();
      fill(h);
      const server = await serve(h);
      running.push(server);
      const pages = countPages(h);
      for (let i = 0; i < 16; i += 1) await askAndNeverRead(server.port);
      expect(await fresh(server.port, '/health/live')).toBe(200);
      expect(pages.built).toBeLessThan(64);
      // The pages are still built, in turns of their own.
      await vi.waitFor(() => expect(pages.built).toBe(128), { timeout: 20_000, interval: 20 });
    },
  );

  it('builds no page for a client that has gone while it waited', async () => {
    const h = createHarness();
    fill(h);
    const server = await serve(h);
    running.push(server);
    const pages = countPages(h);
    // Sixteen clients ask for a page each, together; the last eight leave at once. Their requests
    // were read, so their pages wait in the queue behind the first ones.
    const asked = await Promise.all(Array.from({ length: 16 }, () => askAndNeverRead(server.port, ONE_PAGE)));
    for (const client of asked.slice(8)) client.destroy();
    const ended = () =>
      h.logs.parsed().filter((line) => line.msg === 'request completed' || line.msg === 'request aborted');
    await vi.waitFor(() => expect(ended().length).toBe(16), { timeout: 20_000, interval: 20 });
    expect(ended().filter((line) => line.msg === 'request completed').length).toBeGreaterThanOrEqual(8);
    // Built for each one answered; built for every request read, they were 15 (one client had gone before its request was read).
    expect(pages.built).toBeGreaterThanOrEqual(8);
    expect(pages.built).toBeLessThan(12);
  });
});
