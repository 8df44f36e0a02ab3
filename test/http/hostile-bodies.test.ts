import { describe, expect, it } from 'vitest';
import { MAX_BODY_DEPTH, tooDeepPath } from '../../src/http/body-depth.js';
import { createHarness } from '../support/harness.js';

/** `depth` nested arrays, as raw JSON text: `[[[…]]]`. */
const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);

const POST_ROUTES = [
  '/v1/events',
  '/v1/assistant/trigger/evaluate',
  '/v1/assistant/session/start',
  '/v1/assistant/session/stop',
];

describe('deeply nested bodies', () => {
  it('a component_input 5,000 levels deep is refused 422 naming the path, and the live session stays', async () => {
    const h = createHarness();
    expect(
      (await h.http.post('/v1/assistant/session/start').send({ session_id: 'victim', screen: 'pan_details' })).status,
    ).toBe(200);
    const before = (await h.http.get('/api/sessions/victim')).body as unknown;
    const deep = `{"session_id":"victim","event":"component_input","component_id":"c","hint":"x","properties":{"x":${nested(5000)}}}`;
    const res = await h.http.post('/v1/events').set('Content-Type', 'application/json').send(deep);
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(
      new RegExp(`^body\\.properties\\.x(\\.0)+: nested deeper than ${MAX_BODY_DEPTH} levels$`),
    );
    const after = await h.http.get('/api/sessions/victim');
    expect(after.status).toBe(200);
    expect(after.body).toEqual(before);
    expect(after.body.active).toBe(true);
    expect(h.logs.text).not.toMatch(/session actor failed/);
  });

  it('is refused on every route that takes a body, before validation or routing looks at it', async () => {
    const h = createHarness();
    for (const path of POST_ROUTES) {
      const res = await h.http
        .post(path)
        .set('Content-Type', 'application/json')
        .send(`{"session_id":"s","deep":${nested(200)}}`);
      expect(res.status, path).toBe(422);
      expect(res.body.detail, path).toMatch(/^body\.deep(\.0)+: nested deeper than/);
    }
    expect(h.system.sessionHost.has('s')).toBe(false);
  });

  it('the same nesting in another event no longer poisons reads: refused, and reads answer 200', async () => {
    const h = createHarness();
    await h.http.post('/v1/events').send({ session_id: 's1', event: 'screen_view', screen: 'pan_details' });
    for (const event of ['screen_view', 'identity', 'screen_schema', 'made_up_event']) {
      const res = await h.http
        .post('/v1/events')
        .set('Content-Type', 'application/json')
        .send(`{"session_id":"s1","event":"${event}","properties":{"x":${nested(5000)}},"extra":${nested(5000)}}`);
      expect(res.status, event).toBe(422);
    }
    expect((await h.http.get('/api/sessions/s1')).status).toBe(200);
    expect((await h.http.get('/v1/assistant/context/s1')).status).toBe(200);
    expect((await h.http.get('/api/activity')).status).toBe(200);
  });

  it('nesting up to the limit is accepted, stored and read back by every read path', async () => {
    const h = createHarness();
    // The body is level 1 and properties level 2: this value brings the deepest array to the limit.
    const properties = `{"screen_id":"deep","components":[],"x":${nested(MAX_BODY_DEPTH - 2)}}`;
    for (const event of ['screen_schema', 'identity', 'made_up_event']) {
      const res = await h.http
        .post('/v1/events')
        .set('Content-Type', 'application/json')
        .send(
          `{"session_id":"s1","event":"${event}","properties":${properties},"extra":${nested(MAX_BODY_DEPTH - 1)}}`,
        );
      expect(res.status, event).toBe(200);
    }
    const hint = `{"session_id":"s1","event":"component_input","component_id":"c","hint":"x","properties":{"x":${nested(MAX_BODY_DEPTH - 2)}}}`;
    expect((await h.http.post('/v1/events').set('Content-Type', 'application/json').send(hint)).status).toBe(200);
    expect((await h.http.get('/api/sessions/s1')).status).toBe(200);
    expect((await h.http.get('/v1/assistant/context/s1')).status).toBe(200);
    expect((await h.http.get('/api/activity')).status).toBe(200);
  });

  it('a long key on the path is cut in the detail, so the detail cannot carry it out whole', async () => {
    const h = createHarness();
    const key = 'K'.repeat(500);
    const res = await h.http
      .post('/v1/events')
      .set('Content-Type', 'application/json')
      .send(`{"session_id":"s","${key}":${nested(100)}}`);
    expect(res.status).toBe(422);
    expect(res.body.detail).not.toContain(key);
    expect(res.body.detail.length).toBeLessThan(400);
  });
});

describe('tooDeepPath (also for bodies that arrive other than over HTTP)', () => {
  it('walks without recursion: a value 200,000 levels deep is measured, not a stack overflow', () => {
    const value = JSON.parse(`{"a":${nested(200_000)}}`) as unknown;
    // The object is level 1, `a` level 2: the container at level 33 is 31 arrays further in.
    expect(tooDeepPath(value)).toBe(`a${'.0'.repeat(MAX_BODY_DEPTH - 1)}`);
  });

  it('names the first path past the limit, and nothing within it', () => {
    expect(tooDeepPath({ ok: [[1]], deep: { b: [[[[1]]]] } }, 4)).toBe('deep.b.0.0');
    expect(tooDeepPath({ ok: [[1]] }, 3)).toBeUndefined();
    expect(tooDeepPath('text')).toBeUndefined();
  });
});
