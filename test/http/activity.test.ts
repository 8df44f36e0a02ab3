import { describe, expect, it } from 'vitest';
import { START_TIME, activityId, activityIds, createHarness } from '../support/harness.js';

type Item = {
  id: string;
  kind: string;
  session_id: string;
  user_id: string | null;
  timestamp: string;
  payload: Record<string, unknown>;
  trace: { trace_id: string; request_id: string };
};

async function ingest(h: ReturnType<typeof createHarness>, count: number, sessionId = 's1') {
  for (let i = 0; i < count; i += 1) {
    await h.http.post('/v1/events').send({ session_id: sessionId, event: 'screen_schema_lazy', screen: `screen_${i}` });
  }
}

describe('GET /api/activity', () => {
  it('returns the most recent 100 by default, oldest first, with monotonic string ids', async () => {
    const h = createHarness();
    await ingest(h, 120);
    const res = await h.http.get('/api/activity');
    expect(res.status).toBe(200);
    const items: Item[] = res.body.items;
    expect(items).toHaveLength(100);
    expect(items[0]!.id).toBe(activityId(h, 21));
    expect(items[99]!.id).toBe(activityId(h, 120));
    expect(items.map((i) => i.id)).toEqual(activityIds(h, 21, 120));
    expect(items[0]).toMatchObject({
      kind: 'event',
      session_id: 's1',
      user_id: null,
      payload: { event: 'screen_schema_lazy', screen: 'screen_20', component_id: null },
    });
    expect(items[0]!.timestamp).toBe(new Date(START_TIME).toISOString());
  });

  it('a session_id filter that reads as an identity value is read as its digest, and the answer says which key that is', async () => {
    const h = createHarness();
    await ingest(h, 2, 'ABCDE1234F');
    await ingest(h, 1, 'plain-session');
    const keyed = await h.http.get('/api/activity?session_id=ABCDE1234F');
    expect(keyed.body.session_id).toMatch(/^h-[0-9a-f]{24}$/);
    expect(keyed.body.items.map((item: Item) => item.session_id)).toEqual([
      keyed.body.session_id,
      keyed.body.session_id,
    ]);
    expect(JSON.stringify(keyed.body)).not.toContain('ABCDE1234F');
    expect((await h.http.get('/api/activity?session_id=plain-session')).body.session_id).toBe('plain-session');
    expect((await h.http.get('/api/activity')).body.session_id).toBeNull();
    // The sessions list's text search finds it by the id as typed too.
    const found = await h.http.get('/api/sessions?q=ABCDE1234F');
    expect(found.body.sessions.map((session: { session_id: string }) => session.session_id)).toEqual([
      keyed.body.session_id,
    ]);
  });

  it("an event's item lists at most ten error codes of at most 64 characters, with the total; the session keeps them all", async () => {
    const h = createHarness();
    const errors = Array.from({ length: 100 }, (_, n) => `code_${n}_${'x'.repeat(240)}`);
    expect(
      (
        await h.http
          .post('/v1/events')
          .send({ session_id: 's1', event: 'validation_failed', screen: 'pan_details', component_id: 'pan', errors })
      ).status,
    ).toBe(200);
    const [item] = (await h.http.get('/api/activity?session_id=s1')).body.items as Item[];
    const logged = item!.payload.errors as string[];
    expect(logged).toHaveLength(10);
    expect(logged.every((code) => code.length <= 64)).toBe(true);
    expect(logged[0]).toMatch(/^code_0_x+…$/);
    expect(item!.payload.errors_total).toBe(100);
    expect((await h.http.get('/api/sessions/s1')).body.last_validation_failure.errors).toHaveLength(100);
  });

  it('refuses limit above 1000 as /api/sessions refuses one above 500, rather than cutting it down', async () => {
    const h = createHarness();
    const res = await h.http.get('/api/activity?limit=5000');
    expect(res.status).toBe(422);
    expect(res.body.detail).toBe('limit: must be an integer from 1 to 1000');
    const sessions = await h.http.get('/api/sessions?limit=5000');
    expect(sessions.status).toBe(422);
    expect(sessions.body.detail).toBe('limit: must be an integer from 1 to 500');
  });

  it.each([['0'], ['-1'], ['1.5'], ['abc'], [''], ['1e3']])('limit=%s → 422 naming limit', async (limit) => {
    const h = createHarness();
    const res = await h.http.get(`/api/activity?limit=${limit}`);
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/^limit: must be an integer from 1 to 1000/);
  });

  it('a repeated limit → 422', async () => {
    const h = createHarness();
    const res = await h.http.get('/api/activity?limit=1&limit=2');
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/^limit:/);
  });

  it('filters by session_id and kind, and refuses an unknown kind', async () => {
    const h = createHarness();
    await ingest(h, 3, 'a');
    await ingest(h, 2, 'b');
    await h.http
      .post('/v1/events')
      .send({ session_id: 'b', event: 'screen_schema', properties: { screen_id: 'pan_details', components: [] } });
    const bySession = (await h.http.get('/api/activity?session_id=b')).body.items as Item[];
    expect(bySession.map((i) => i.kind)).toEqual(['event', 'event', 'event', 'schema_push']);
    expect(bySession.every((i) => i.session_id === 'b')).toBe(true);
    const byKind = (await h.http.get('/api/activity?kind=schema_push&limit=1')).body.items as Item[];
    expect(byKind).toHaveLength(1);
    expect(byKind[0]!.payload.screen_id).toBe('pan_details');
    const bad = await h.http.get('/api/activity?kind=events');
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toMatch(/^kind: must be one of event, trigger/);
  });

  it('carries media_ready and the feature flag map, the same as /api/features', async () => {
    const h = createHarness({ env: { FEATURE_FLAGS: '{"trigger.v2_scoring":true}' } });
    const list = (await h.http.get('/api/activity')).body;
    const features = (await h.http.get('/api/features')).body;
    expect(list.media_ready).toBe(false);
    expect(features.flags).toEqual({
      'integration.media_dispatch': false,
      'trigger.v2_scoring': true,
      'integration.schema_registry': true,
      'ui.dynamic_popups': true,
    });
    expect(list.feature_flags).toEqual(features.flags);
  });

  it('keeps only ACTIVITY_BUFFER_SIZE items', async () => {
    const h = createHarness({ env: { ACTIVITY_BUFFER_SIZE: '5' } });
    await ingest(h, 8);
    const items = (await h.http.get('/api/activity?limit=1000')).body.items as Item[];
    expect(items.map((i) => i.id)).toEqual(activityIds(h, 4, 8));
  });
});

describe('activity trace fields', () => {
  const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

  it('take trace_id and request_id from the body first', async () => {
    const h = createHarness();
    await h.http
      .post('/v1/events')
      .set('X-Request-ID', 'hdr-req')
      .set('traceparent', traceparent)
      .send({ session_id: 's1', event: 'identity', trace_id: 'body-trace', request_id: 'body-req' });
    const [item] = (await h.http.get('/api/activity')).body.items as Item[];
    expect(item!.trace).toEqual({ trace_id: 'body-trace', request_id: 'body-req' });
  });

  it('fall back to a traceparent in the body, then the headers', async () => {
    const h = createHarness();
    await h.http.post('/v1/events').send({ session_id: 's1', event: 'identity', traceparent });
    await h.http
      .post('/v1/events')
      .set('X-Request-ID', 'hdr-req')
      .set('traceparent', traceparent)
      .send({ session_id: 's1', event: 'identity' });
    const [fromBody, fromHeaders] = (await h.http.get('/api/activity')).body.items as Item[];
    expect(fromBody!.trace.trace_id).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(fromHeaders!.trace).toEqual({ trace_id: '4bf92f3577b34da6a3ce929d0e0e4736', request_id: 'hdr-req' });
  });

  it('are generated when nothing is sent, and the request id is echoed', async () => {
    const h = createHarness();
    const res = await h.http
      .post('/v1/events')
      .set('traceparent', '00-00000000000000000000000000000000-00f067aa0ba902b7-01')
      .send({ session_id: 's1', event: 'identity' });
    const [item] = (await h.http.get('/api/activity')).body.items as Item[];
    expect(item!.trace.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(item!.trace.trace_id).not.toBe('00000000000000000000000000000000');
    expect(item!.trace.request_id).toBe(res.headers['x-request-id']);
  });

  it('X-Request-ID is echoed on every response, errors included, and a hostile one is replaced', async () => {
    const h = createHarness();
    expect((await h.http.get('/api/activity').set('X-Request-ID', 'abc-123')).headers['x-request-id']).toBe('abc-123');
    expect((await h.http.get('/nope').set('X-Request-ID', 'abc-404')).headers['x-request-id']).toBe('abc-404');
    const replaced = (await h.http.get('/health').set('X-Request-ID', 'a b<script>')).headers['x-request-id'];
    expect(replaced).toMatch(/^[0-9a-f-]{36}$/);
  });
});
