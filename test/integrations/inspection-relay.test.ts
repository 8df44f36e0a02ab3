import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { InspectionRelay } from '../../src/integrations/inspection-relay.js';
import { InspectionRelayError, startInspectionRelay } from '../../src/integrations/inspection-relay.js';
import { STATELY_INSPECTOR_URL } from '../../src/integrations/inspection-viewer-page.js';
import { createLogger } from '../../src/logger.js';

const logger = createLogger('silent');
const relays: InspectionRelay[] = [];

afterEach(async () => {
  await Promise.all(relays.splice(0).map((relay) => relay.close()));
});

async function relay(): Promise<InspectionRelay> {
  const started = await startInspectionRelay({ host: '127.0.0.1', port: 0, logger });
  relays.push(started);
  return started;
}

/** How a WebSocket handshake ends: open, or the status the relay refused it with. */
async function handshake(url: string, options: WebSocket.ClientOptions): Promise<'open' | number> {
  const socket = new WebSocket(url, options);
  // Ending a refused handshake reports an error on the socket: expected here.
  socket.on('error', () => {});
  return new Promise((resolve) => {
    socket.once('open', () => {
      socket.terminate();
      resolve('open');
    });
    socket.once('unexpected-response', (_req, res) => {
      socket.terminate();
      resolve(res.statusCode ?? 0);
    });
  });
}

const portOf = (url: string) => new URL(url).port;

describe('the inspection relay', () => {
  it('listens on loopback and serves the viewer page, which embeds the Stately inspector and reads the relay it came from', async () => {
    const started = await relay();
    expect(started.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    const page = await fetch(started.viewerUrl);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await page.text();
    expect(html).toContain(`<iframe id="inspector" src="${STATELY_INSPECTOR_URL}">`);
    expect(html).toContain("new WebSocket('ws://' + location.host)");
    expect((await fetch(new URL('/anything', started.viewerUrl))).status).toBe(404);
  });

  it('relays each message to every other client, and to nobody else', async () => {
    const started = await relay();
    const publisher = new WebSocket(started.url);
    const viewer = new WebSocket(started.url);
    await Promise.all([once(publisher, 'open'), once(viewer, 'open')]);
    const toPublisher: string[] = [];
    publisher.on('message', (data) => toPublisher.push(String(data)));
    const received = once(viewer, 'message');
    publisher.send(JSON.stringify({ type: '@xstate.event', sessionId: 'x:0', event: { type: 'ping' } }));
    expect(JSON.parse(String((await received)[0]))).toMatchObject({ event: { type: 'ping' } });
    expect(toPublisher).toEqual([]);
    publisher.terminate();
    viewer.terminate();
  });

  it('refuses a browser page from another origin, and a request naming a host other than loopback (DNS rebinding)', async () => {
    const started = await relay();
    const port = portOf(started.url);
    expect(await handshake(started.url, {})).toBe('open');
    expect(await handshake(started.url, { origin: `http://127.0.0.1:${port}` })).toBe('open');
    expect(await handshake(started.url, { origin: 'https://elsewhere.example' })).toBe(401);
    expect(await handshake(started.url, { headers: { host: `rebound.example:${port}` } })).toBe(401);
    // fetch may not set Host; a plain request can, as a rebinding browser effectively does.
    const [page] = (await once(
      request(started.viewerUrl, { headers: { host: `rebound.example:${port}` } }).end(),
      'response',
    )) as [IncomingMessage];
    expect(page.statusCode).toBe(403);
    page.resume();
  });

  it('fails to start with the address and the reason when the port is taken, instead of crashing', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const attempt = startInspectionRelay({ host: '127.0.0.1', port, logger });
      await expect(attempt).rejects.toThrow(InspectionRelayError);
      await expect(attempt).rejects.toThrow(`cannot listen on 127.0.0.1:${port} (EADDRINUSE)`);
    } finally {
      taken.close();
    }
  });
});
