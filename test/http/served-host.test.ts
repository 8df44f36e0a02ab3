import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/http/server.js';
import { createHarness, serve } from '../support/harness.js';

const servers: RunningServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close(100);
});

const event = { session_id: 'rebound', event: 'identity' };

/** The status a WebSocket upgrade gets, sent with these headers. */
async function upgradeStatus(url: string, headers: Record<string, string>): Promise<number> {
  const socket = new WebSocket(url, { headers });
  return new Promise((resolve) => {
    socket.once('open', () => {
      socket.close();
      resolve(101);
    });
    socket.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    socket.once('error', () => undefined);
  });
}

describe('the names this service answers to (DNS rebinding)', () => {
  it('with no API_KEY, a request naming another host is refused 403 and changes nothing; loopback names and addresses are served', async () => {
    const h = createHarness();
    const refused = await h.http.post('/v1/events').set('Host', 'attacker.example:8080').send(event);
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/^Host: not a name this service answers to/);
    expect((await h.http.get('/api/sessions').set('Host', 'attacker.example')).status).toBe(403);
    expect((await h.http.get('/api/sessions/rebound').set('Host', '127.0.0.1')).status).toBe(404);
    for (const host of [
      'localhost:8080',
      'LOCALHOST.',
      '127.0.0.1:8080',
      '[::1]:8080',
      'console.localhost',
      '10.0.0.7',
    ]) {
      expect((await h.http.get('/api/features').set('Host', host)).status, host).toBe(200);
    }
    // A load balancer's probe names the service however it likes.
    expect((await h.http.get('/health/live').set('Host', 'pod-7.internal')).status).toBe(200);
  });

  it('ALLOWED_HOSTS adds names; with API_KEY and no ALLOWED_HOSTS the key alone decides', async () => {
    const listed = createHarness({ env: { ALLOWED_HOSTS: 'kyc-backend, Assistant.Example.com' } });
    expect((await listed.http.post('/v1/events').set('Host', 'kyc-backend:8080').send(event)).status).toBe(200);
    expect((await listed.http.get('/api/features').set('Host', 'assistant.example.com')).status).toBe(200);
    expect((await listed.http.get('/api/features').set('Host', 'other.example.com')).status).toBe(403);
    const keyed = createHarness({ env: { API_KEY: 'k1' } });
    expect(
      (await keyed.http.get('/api/features').set('Host', 'assistant.example.com').set('X-API-Key', 'k1')).status,
    ).toBe(200);
  });

  it("with no API_KEY, a WebSocket opened from another site's page, or naming another host, is refused 403", async () => {
    const h = createHarness();
    const server = await serve(h);
    servers.push(server);
    const url = `${server.url.replace('http', 'ws')}/v1/events/ws`;
    expect(await upgradeStatus(url, { Origin: 'http://attacker.example' })).toBe(403);
    // A site served by its bare address has that address as its origin: an IP is no proof here.
    expect(await upgradeStatus(url, { Origin: 'http://203.0.113.5' })).toBe(403);
    expect(await upgradeStatus(url, { Origin: 'null' })).toBe(403);
    expect(await upgradeStatus(url, { Host: 'attacker.example' })).toBe(403);
    // A native client sends no Origin; the console is served from this service's own address.
    expect(await upgradeStatus(url, {})).toBe(101);
    expect(await upgradeStatus(url, { Origin: server.url })).toBe(101);
    expect(await upgradeStatus(url, { Origin: 'http://localhost:3000' })).toBe(101);
  });
});
