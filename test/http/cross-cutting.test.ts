import type { IncomingMessage } from 'node:http';
import { request } from 'node:http';
import { describe, expect, it, vi } from 'vitest';
import { ACTIVITY_ACTOR_BYTES, ACTIVITY_READER_BYTES } from '../../src/actor-system/activity-actor.js';
import { apiDocument } from '../../src/http/api-document.js';
import { createHarness, serve } from '../support/harness.js';

describe('X-API-Key', () => {
  const env = { API_KEY: 'old-key, new-key' };

  it('is required on every route but the health probes, answered 401 {detail}', async () => {
    const h = createHarness({ env });
    for (const [method, path] of [
      ['get', '/api/activity'],
      ['get', '/api/features'],
      ['post', '/v1/events'],
      ['get', '/openapi.json'],
      ['get', '/nope'],
    ] as const) {
      const missing = await h.http[method](path);
      expect(missing.status, path).toBe(401);
      expect(missing.body).toEqual({ detail: 'missing X-API-Key header' });
    }
    for (const probe of ['/health', '/health/live', '/health/ready'])
      expect((await h.http.get(probe)).status, probe).toBe(200);
  });

  it('accepts each of the rotated keys and refuses anything else, changing nothing', async () => {
    const h = createHarness({ env });
    const event = { session_id: 's1', event: 'identity' };
    expect((await h.http.post('/v1/events').set('X-API-Key', 'old-key').send(event)).status).toBe(200);
    expect((await h.http.post('/v1/events').set('X-API-Key', 'new-key').send(event)).status).toBe(200);
    for (const wrong of ['NEW-KEY', 'new', 'old-key,new-key']) {
      const res = await h.http.post('/v1/events').set('X-API-Key', wrong).send({ session_id: 's2', event: 'identity' });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ detail: 'invalid API key' });
    }
    expect(h.system.sessionHost.has('s2')).toBe(false);
  });

  it('is not checked when API_KEY is unset', async () => {
    const h = createHarness();
    expect((await h.http.get('/api/features')).status).toBe(200);
  });
});

describe('rate limit', () => {
  it('answers 429 {detail} with Retry-After past RATE_LIMIT_PER_MINUTE, /health exempt', async () => {
    const h = createHarness({ env: { RATE_LIMIT_PER_MINUTE: '3', RATE_LIMIT_LOOPBACK: 'true' } });
    for (let i = 0; i < 3; i += 1) expect((await h.http.get('/api/features')).status).toBe(200);
    const limited = await h.http.get('/api/features');
    expect(limited.status).toBe(429);
    expect(limited.body.detail).toMatch(/^rate limit exceeded/);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect((await h.http.get('/health')).status).toBe(200);
  });

  it('does not limit clients on this machine when the service is bound to loopback with no proxy, unless told to', async () => {
    const local = createHarness({ env: { RATE_LIMIT_PER_MINUTE: '3' } });
    for (let i = 0; i < 10; i += 1) expect((await local.http.get('/api/features')).status).toBe(200);
    // Reachable from elsewhere (or behind a proxy, whose own address is loopback): every client counts.
    for (const env of [{ HOST: '0.0.0.0' }, { TRUST_PROXY: '1' }] as Record<string, string>[]) {
      const exposed = createHarness({ env: { RATE_LIMIT_PER_MINUTE: '3', ...env } });
      for (let i = 0; i < 3; i += 1) expect((await exposed.http.get('/api/features')).status).toBe(200);
      expect((await exposed.http.get('/api/features')).status).toBe(429);
    }
  });
});

describe('errors', () => {
  it('an unknown route is a JSON 404', async () => {
    const h = createHarness();
    const res = await h.http.get('/v2/nothing');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({ detail: 'no route for GET /v2/nothing' });
  });

  it('GET /api/sessions/{id}: 404 for an unknown session, 422 for an impossible id', async () => {
    const h = createHarness();
    expect((await h.http.get('/api/sessions/nobody')).body).toEqual({ detail: 'session nobody not found' });
    const bad = await h.http.get('/api/sessions/a%20b');
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toMatch(/^session_id: must be 1-128 characters/);
  });

  it('/health answers {status:"ok"} with the store, the memory budget in use and open connections by kind', async () => {
    const h = createHarness({ env: { MEMORY_BUDGET_MB: '100' } });
    const { body } = await h.http.get('/health');
    expect(body).toMatchObject({
      status: 'ok',
      store: { kind: h.config.store.kind, status: 'ok' },
      // Before any session, what the activity actor holds with its two readers (metrics, flow graphs).
      memory: { budget_bytes: 40 * 2 ** 20, used_bytes: ACTIVITY_ACTOR_BYTES + 2 * ACTIVITY_READER_BYTES, sessions: 0 },
      connections: { http: 0, sse: 0, websocket: 0 },
    });
    // The probes answer anyone: where the store's file lives is not theirs to say.
    expect(body.store).not.toHaveProperty('file');
    await h.http.post('/v1/events').send({ session_id: 's1', event: 'identity' });
    const { memory } = (await h.http.get('/health')).body;
    expect(memory.sessions).toBe(1);
    expect(memory.used_bytes).toBeGreaterThan(0);
  });
});

describe('request log', () => {
  it('carries the request id, X-SVC-Session-ID and X-SVC-SDK-Version, and never the API key', async () => {
    const h = createHarness({ env: { API_KEY: 'top-secret-key' } });
    await h.http
      .post('/v1/events')
      .set('X-API-Key', 'top-secret-key')
      .set('X-Request-ID', 'req-log-1')
      .set('X-SVC-Session-ID', 'svc-77')
      .set('X-SVC-SDK-Version', '2.4.1')
      .send({ session_id: 's1', event: 'identity' });
    const line = h.logs.parsed().find((entry) => (entry.req as { id?: string } | undefined)?.id === 'req-log-1');
    expect(line).toBeDefined();
    expect(line).toMatchObject({ svc_session_id: 'svc-77', sdk_version: '2.4.1', res: { statusCode: 200 } });
    expect(h.logs.text).not.toContain('top-secret-key');
  });

  it('logs the path without its query, and correlation headers only when they are plain ids, cut short', async () => {
    const h = createHarness();
    await h.http.get('/api/activity?api_key=k1-SECRET&limit=5').set('X-Request-ID', 'q-1');
    await h.http
      .post('/v1/events')
      .set('X-Request-ID', 'q-2')
      .set('X-SVC-SDK-Version', 'RAWSECRET <b>')
      .set('X-SVC-Session-ID', 'S'.repeat(120))
      .set('X-Client-ID', 'kycis_demo')
      .send({ session_id: 's1', event: 'identity' });
    const lineOf = (id: string) =>
      h.logs.parsed().find((entry) => (entry.req as { id?: string } | undefined)?.id === id);
    expect(lineOf('q-1')).toMatchObject({ req: { url: '/api/activity' }, res: { statusCode: 200 } });
    expect(lineOf('q-2')).toMatchObject({
      sdk_version: '[invalid]',
      svc_session_id: `${'S'.repeat(64)}…`,
      client_id: 'kycis_demo',
    });
    expect(h.logs.text).not.toContain('k1-SECRET');
    expect(h.logs.text).not.toContain('RAWSECRET');
    expect(h.logs.text).not.toContain('S'.repeat(65));
  });

  it('logs one line per request: completed at info, a stream its client left at info, or aborted at warn when the client leaves a request first', async () => {
    const h = createHarness();
    const server = await serve(h);
    try {
      await fetch(`${server.url}/v1/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': 'done-1' },
        body: '{"session_id":"s1","event":"identity"}',
      });
      await new Promise<void>((resolve) => {
        const req = request(`${server.url}/api/activity/stream`, { headers: { 'x-request-id': 'left-1' } }, (res) => {
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        });
        req.end();
      });
      // A body announced and never finished: the client goes before any answer.
      const arrived = new Promise<void>((resolve) =>
        server.server.on('request', (req: IncomingMessage) => req.headers['x-request-id'] === 'cut-1' && resolve()),
      );
      const cut = request(`${server.url}/v1/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': '100', 'x-request-id': 'cut-1' },
      });
      cut.on('error', () => undefined);
      cut.write('{"session_id":');
      await arrived;
      cut.destroy();
      const logged = (id: string) =>
        h.logs.parsed().some((line) => (line.req as { id?: string } | undefined)?.id === id);
      await vi.waitFor(() => expect(logged('left-1') && logged('cut-1')).toBe(true));
      const lines = h.logs
        .parsed()
        .filter((line) => ['done-1', 'left-1', 'cut-1'].includes((line.req as { id?: string } | undefined)?.id ?? ''));
      expect(lines.map((line) => [(line.req as { id: string }).id, line.msg, line.level])).toEqual([
        ['done-1', 'request completed', 30],
        ['left-1', 'stream closed', 30],
        ['cut-1', 'request aborted', 40],
      ]);
      // The client left before any answer began: no status is claimed for it.
      expect(lines.map((line) => (line.res as { statusCode: number | null }).statusCode)).toEqual([200, 200, null]);
    } finally {
      await server.close(0);
    }
  });
  it("keeps a slow answer's time as a number: a duration is not an identity value", async () => {
    const h = createHarness();
    const server = await serve(h);
    try {
      // The body's last bytes come a second after its first, so the answer takes over 1,000 ms:
      // four digits, which the log's privacy rule masks unless the key names a measure.
      const body = '{"session_id":"s1","event":"identity"}';
      const answered = new Promise<number>((resolve) => {
        const slow = request(
          `${server.url}/v1/events`,
          {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'content-length': body.length, 'x-request-id': 'slow-1' },
          },
          (res) => resolve(res.statusCode ?? 0),
        );
        slow.write(body.slice(0, 10));
        setTimeout(() => slow.end(body.slice(10)), 1_050);
      });
      expect(await answered).toBe(200);
      const line = () => h.logs.parsed().find((entry) => (entry.req as { id?: string } | undefined)?.id === 'slow-1');
      await vi.waitFor(() => expect(line()).toBeDefined());
      expect(line()!.response_ms).toBeGreaterThanOrEqual(1_000);
    } finally {
      await server.close(0);
    }
  });
});

describe('GET /openapi.json', () => {
  it('documents every route from the zod schemas', async () => {
    const h = createHarness();
    const doc = (await h.http.get('/openapi.json')).body;
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/v1/events', '/api/activity', '/api/features', '/api/sessions/{session_id}', '/health']),
    );
    const eventIn = doc.components.schemas.EventIn;
    expect(eventIn.required).toEqual(['session_id', 'event']);
    expect(eventIn.properties.session_id.pattern).toBe('^[A-Za-z0-9._:-]{1,128}$');
    expect(doc.paths['/v1/events'].post.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/EventIn',
    });
    const limit = doc.paths['/api/activity'].get.parameters.find((p: { name: string }) => p.name === 'limit');
    expect(limit.in).toBe('query');
    expect(doc.paths['/health'].get.security).toEqual([]);
    // Every $ref resolves.
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    for (const ref of refs) {
      const name = ref.slice('"$ref":"#/components/schemas/'.length, -1);
      expect(doc.components.schemas[name], ref).toBeDefined();
    }
  });
  it('answers both copies of the document without serializing it per request', async () => {
    // /docs/openapi.json answers anyone: a flood of it must not cost a serialization per request
    // (docs/reference/limits.md, "Answers not read").
    const h = createHarness({ env: { API_KEY: 'k' } });
    await h.http.get('/docs/openapi.json').expect(200);
    const stringify = vi.spyOn(JSON, 'stringify');
    try {
      const answers = [
        await h.http.get('/docs/openapi.json').expect(200),
        await h.http.get('/openapi.json').set('X-API-Key', 'k').expect(200),
      ];
      const large = stringify.mock.results.filter(
        (result) => typeof result.value === 'string' && result.value.length > 10_000,
      );
      expect(large).toHaveLength(0);
      for (const answer of answers) {
        expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(answer.text).toBe(JSON.stringify(apiDocument()));
      }
    } finally {
      stringify.mockRestore();
    }
  });
});
