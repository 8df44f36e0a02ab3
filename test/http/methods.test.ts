import { describe, expect, it } from 'vitest';
import { apiDocument } from '../../src/http/api-document.js';
import { createHarness } from '../support/harness.js';

const paths = (apiDocument() as { paths: Record<string, Record<string, unknown>> }).paths;
const SESSION = '7664f88e-4980-41c3-bec0-f0e1591ee548';
const concrete = (path: string) => path.replace('{session_id}', SESSION);

describe('methods the document does not declare', () => {
  it('are answered 405 {detail} with Allow on every documented path, with or without a key', async () => {
    const h = createHarness({ env: { API_KEY: 'k' } });
    for (const [path, item] of Object.entries(paths)) {
      const declared = Object.keys(item).map((method) => method.toUpperCase());
      const allow = [...declared, ...(declared.includes('GET') ? ['HEAD'] : []), 'OPTIONS'].join(', ');
      for (const method of ['TRACE', 'PATCH'] as const) {
        const request = h.http[method === 'TRACE' ? 'trace' : 'patch'](concrete(path));
        const res = await (method === 'TRACE' ? request : request.set('X-API-Key', 'k'));
        expect(res.status, `${method} ${path}`).toBe(405);
        expect(res.headers.allow, `${method} ${path}`).toBe(allow);
        expect(res.body.detail, `${method} ${path}`).toBe(
          `${method} is not a method of ${concrete(path)}; it answers ${allow}`,
        );
      }
    }
  });

  it('OPTIONS lists the declared methods and changes nothing', async () => {
    const h = createHarness();
    const res = await h.http.options('/v1/events');
    expect(res.status).toBe(204);
    expect(res.headers.allow).toBe('POST, OPTIONS');
    expect((await h.http.options(`/api/sessions/${SESSION}`)).headers.allow).toBe('GET, HEAD, OPTIONS');
    expect((await h.http.options('/health')).headers.allow).toBe('GET, HEAD, OPTIONS');
    expect(h.system.sessionHost.has(SESSION)).toBe(false);
  });

  it('leave declared methods, HEAD of a GET, and paths outside the document to the routes', async () => {
    const h = createHarness();
    expect((await h.http.head('/api/features')).status).toBe(200);
    expect((await h.http.get('/API/Features/')).status).toBe(200);
    const unknown = await h.http.trace('/nope');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ detail: 'no route for TRACE /nope' });
    expect(
      (
        await h.http
          .put('/v1/events')
          .set('Content-Type', 'application/json')
          .send('{"session_id":"s1","event":"identity"}')
      ).status,
    ).toBe(405);
    expect(h.system.sessionHost.has('s1')).toBe(false);
  });
});
