import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService } from '../support/service-process.js';
import { launchChromium } from './browser.js';

/**
 * A keyless service on this machine against a page of another site, in Chromium: DNS rebinding
 * (the page's own name made to resolve to 127.0.0.1) and a WebSocket opened across origins
 * (docs/explanation/security.md, "Names the service answers to").
 */
describe('a page of another site against a service with no API_KEY, in Chromium', () => {
  let service: ReturnType<typeof startService>;
  let port: string;
  let browser: Browser;
  let page: Page;
  let elsewhere: Server;

  beforeAll(async () => {
    service = startService({ RATE_LIMIT_PER_MINUTE: '0' });
    port = new URL(await service.url).port;
    // attacker.example resolves to this machine, as a rebound name does.
    browser = await launchChromium(['--host-resolver-rules=MAP attacker.example 127.0.0.1']);
    page = await browser.newPage();
    // Another site's server.
    elsewhere = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>elsewhere</title>'),
    );
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    service?.child.kill('SIGTERM');
    await new Promise((resolve) => elsewhere?.close(resolve));
  });

  it('a rebound name gets 403 for the API and the console, so the page reads and starts nothing', async () => {
    expect((await page.goto(`http://attacker.example:${port}/api/sessions`))?.status()).toBe(403);
    expect((await page.goto(`http://attacker.example:${port}/console`))?.status()).toBe(403);
    // What the attack runs: requests of the page's own origin, which the browser lets it read.
    const started = await page.evaluate(async () => {
      const res = await fetch('/v1/assistant/session/start', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ session_id: 'rebound', screen: 'pan_details' }),
      });
      return { status: res.status, body: await res.text() };
    });
    expect(started.status).toBe(403);
    expect(started.body).toContain('Host: not a name this service answers to');
    // The same service by a loopback name is served.
    expect((await page.goto(`http://localhost:${port}/api/sessions/rebound`))?.status()).toBe(404);
  });

  it("a WebSocket opened from another site's page is refused; one from the service's own page opens", async () => {
    const opens = (target: string) =>
      page.evaluate(
        (url) =>
          new Promise<string>((resolve) => {
            const socket = new WebSocket(url);
            socket.onopen = () => (socket.close(), resolve('open'));
            socket.onerror = () => resolve('refused');
          }),
        target,
      );
    // Another site's page, whose name resolves anywhere at all: here to this machine, another port.
    await page.goto(`http://attacker.example:${(elsewhere.address() as AddressInfo).port}/`);
    expect(await opens(`ws://127.0.0.1:${port}/v1/events/ws`)).toBe('refused');
    await page.goto(`http://127.0.0.1:${port}/console`);
    expect(await opens(`ws://127.0.0.1:${port}/v1/events/ws`)).toBe('open');
  });
});
