import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/http/server.js';
import type { Harness } from '../support/harness.js';
import { createHarness, serve } from '../support/harness.js';

/**
 * Requests an adversarial review sent that the service answered wrongly: each now gets a JSON
 * `detail` naming its problem, and what was refused changed nothing.
 */
const open: RunningServer[] = [];
afterEach(async () => {
  for (const server of open.splice(0)) await server.close(100);
});

async function served(h: Harness): Promise<string> {
  const server = await serve(h);
  open.push(server);
  return server.url;
}

/** A raw HTTP/1.1 request, headers as given (fetch refuses `Upgrade` and `Connection`). */
function raw(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: Buffer | string,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      {
        method,
        headers: { ...headers, ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const sessionExists = async (h: Harness, id: string) => (await h.http.get(`/api/sessions/${id}`)).status === 200;

describe('requests the service used to answer wrongly', () => {
  it("a request offering another protocol (curl's `Upgrade: h2c`) is answered as plain HTTP", async () => {
    const h = createHarness();
    const url = await served(h);
    const res = await raw(
      url,
      'POST',
      '/v1/events',
      {
        'content-type': 'application/json',
        connection: 'Upgrade, HTTP2-Settings',
        upgrade: 'h2c',
        'http2-settings': 'AAMAAABkAAQAoAAAAAIAAAAA',
      },
      JSON.stringify({ session_id: 'h2c1', event: 'component_input' }),
    );
    expect(res.status).toBe(200);
    expect(await sessionExists(h, 'h2c1')).toBe(true);
    expect((await raw(url, 'GET', '/health', { connection: 'Upgrade', upgrade: 'foo' })).status).toBe(200);
  });

  it('a WebSocket handshake the control plane refuses gets JSON naming why', async () => {
    const h = createHarness();
    const url = await served(h);
    const handshake = {
      connection: 'Upgrade',
      upgrade: 'websocket',
      'sec-websocket-version': '13',
      'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
    };
    const cases: [string, string, Record<string, string>, number, RegExp][] = [
      ['POST', '/v1/events/ws', handshake, 405, /handshake is a GET/],
      ['GET', '/v1/events/ws', { ...handshake, 'sec-websocket-key': 'short' }, 400, /Sec-WebSocket-Key/],
      ['GET', '/v1/events/ws', { ...handshake, 'sec-websocket-version': '7' }, 400, /Sec-WebSocket-Version/],
      ['GET', '/v1/events/ws', { ...handshake, 'sec-websocket-version': '8' }, 400, /send 13/],
      ['GET', '/v1/other', handshake, 404, /no WebSocket endpoint at \/v1\/other/],
    ];
    for (const [method, path, headers, status, detail] of cases) {
      const res = await raw(url, method, path, headers);
      expect(res.status, `${method} ${path}`).toBe(status);
      expect(res.headers['content-type']).toBe('application/json');
      expect((JSON.parse(res.body) as { detail: string }).detail).toMatch(detail);
    }
  });

  it('an Idempotency-Key sent again to another path, or the same path spelled otherwise, is refused and runs nothing', async () => {
    const h = createHarness();
    const body = { session_id: 'ik1', event: 'component_input', component_id: 'f' };
    expect((await h.http.post('/v1/events').set('Idempotency-Key', 'same-key-1').send(body)).status).toBe(200);
    for (const path of ['/V1/EVENTS', '/v1/events/', '/v1/flows/set']) {
      const res = await h.http.post(path).set('Idempotency-Key', 'same-key-1').send(body);
      expect(res.status, path).toBe(422);
      expect(res.body.detail).toMatch(/Idempotency-Key: already used for a different request/);
    }
    const events = (await h.http.get('/api/activity?session_id=ik1&kind=event')).body.items as unknown[];
    expect(events).toHaveLength(1);
    // The same request again is the first one's answer.
    expect((await h.http.post('/v1/events').set('Idempotency-Key', 'same-key-1').send(body)).status).toBe(200);
  });

  it('a body that is not UTF-8 is refused (415), not changed; `charset=utf8` is UTF-8', async () => {
    const h = createHarness();
    const url = await served(h);
    const bytes = Buffer.concat([
      Buffer.from('{"session_id":"u8f","event":"x","properties":{"note":"ab'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('cd"}}'),
    ]);
    for (const type of ['application/json', 'application/json; charset="utf-8"']) {
      const res = await raw(url, 'POST', '/v1/events', { 'content-type': type }, bytes);
      expect(res.status, type).toBe(415);
      expect(JSON.parse(res.body)).toEqual({ detail: 'request body is not valid UTF-8; send UTF-8 JSON' });
    }
    expect(await sessionExists(h, 'u8f')).toBe(false);
    const utf8 = await raw(
      url,
      'POST',
      '/v1/events',
      { 'content-type': 'application/json; charset=utf8' },
      JSON.stringify({ session_id: 'u8ok', event: 'x' }),
    );
    expect(utf8.status).toBe(200);
  });

  it('a query parameter written with brackets is refused, not silently ignored', async () => {
    const h = createHarness();
    for (const path of ['/api/activity?session_id[]=x', '/api/sessions?limit[]=1', '/api/activity?kind[]=event']) {
      const res = await h.http.get(path);
      expect(res.status, path).toBe(422);
      expect(res.body.detail).toMatch(/brackets are not read/);
    }
    // The key is named masked, then cut: never the PAN's first nine characters.
    const named = await h.http.get(`/api/activity?${'x'.repeat(55)}-ABCDE1234F[]=1`);
    expect(named.status).toBe(422);
    expect(named.body.detail).not.toContain('ABCDE');
  });

  it('a zstd body that is not zstd is named so, as gzip, deflate and br are', async () => {
    const h = createHarness();
    const url = await served(h);
    const res = await raw(
      url,
      'POST',
      '/v1/events',
      { 'content-type': 'application/json', 'content-encoding': 'zstd' },
      '{"session_id":"u","event":"x"}',
    );
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toEqual({ detail: 'body could not be decompressed as its Content-Encoding says' });
  });
});
