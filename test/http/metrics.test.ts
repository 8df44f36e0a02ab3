import { describe, expect, it, vi } from 'vitest';
import { MAX_OTHER_EVENT_TYPES } from '../../src/metrics/activity-metrics.js';
import type { Harness } from '../support/harness.js';
import { createHarness, serve } from '../support/harness.js';
import { SseTestClient } from '../support/sse-client.js';
import { WsClient } from '../support/ws-client.js';

/** The value of one series in a Prometheus text exposition, or undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const braces = /\{([^}]*)\}/.exec(line)?.[1] ?? '';
    const found = Object.fromEntries([...braces.matchAll(/(\w+)="([^"]*)"/g)].map((match) => [match[1], match[2]]));
    if (Object.entries(labels).every(([key, value]) => found[key] === value))
      return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

const scrape = async (h: Harness): Promise<string> => (await h.http.get('/metrics').expect(200)).text;
const evaluate = (h: Harness, sessionId: string, screen: string) =>
  h.http
    .post('/v1/assistant/trigger/evaluate')
    .send({ session_id: sessionId, signals: { screen, time_spent: 25, errors: [], idle_seconds: 0 } })
    .expect(200);

describe('GET /metrics', () => {
  it("serves Node's default metrics and the service's own in Prometheus text format", async () => {
    const h = createHarness();
    const res = await h.http.get('/metrics').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.text).toContain('# TYPE process_cpu_seconds_total counter');
    expect(res.text).toContain('# TYPE nodejs_heap_size_used_bytes gauge');
    for (const name of [
      'kyc_sessions',
      'kyc_events_ingested_total',
      'kyc_trigger_decisions_total',
      'kyc_voice_starts_total',
      'kyc_media_call_duration_seconds',
      'kyc_http_request_duration_seconds',
      'kyc_sse_connections',
      'kyc_ws_connections',
      'kyc_activity_items_total',
      'kyc_actor_step_duration_seconds',
    ]) {
      expect(res.text, name).toContain(`# TYPE ${name} `);
    }
  });

  it('counts events by type, trigger decisions by reason and outcome, voice starts by warnings, activity by kind, sessions by status', async () => {
    const h = createHarness();
    await h.http.post('/v1/events').send({ session_id: 's1', event: 'screen_view', screen: 'pan_details' }).expect(200);
    await h.http.post('/v1/events').send({ session_id: 's1', event: 'screen_view', screen: 'pan_details' }).expect(200);
    await h.http.post('/v1/events').send({ session_id: 's1', event: 'made_up_by_a_client' }).expect(200);
    expect((await evaluate(h, 's1', 'pan_details')).body.trigger).toBe(true);
    expect((await evaluate(h, 's1', 'pan_details')).body.reason).toBe('cooldown');
    await h.http.post('/v1/assistant/session/start').send({ session_id: 's1' }).expect(200);

    const text = await scrape(h);
    expect(sample(text, 'kyc_events_ingested_total', { type: 'screen_view' })).toBe(2);
    expect(sample(text, 'kyc_events_ingested_total', { type: 'made_up_by_a_client' })).toBe(1);
    expect(sample(text, 'kyc_trigger_decisions_total', { outcome: 'triggered' })).toBe(1);
    expect(sample(text, 'kyc_trigger_decisions_total', { reason: 'cooldown', outcome: 'suppressed' })).toBe(1);
    expect(sample(text, 'kyc_voice_starts_total', { outcome: 'degraded', warning: 'media_not_configured' })).toBe(1);
    expect(sample(text, 'kyc_activity_items_total', { kind: 'event' })).toBe(3);
    expect(sample(text, 'kyc_activity_items_total', { kind: 'trigger' })).toBe(2);
    expect(sample(text, 'kyc_activity_items_total', { kind: 'session_start' })).toBe(1);
    expect(sample(text, 'kyc_sessions', { status: 'running' })).toBe(1);
    expect(sample(text, 'kyc_sessions', { status: 'hibernated' })).toBe(0);
    expect(sample(text, 'kyc_actor_step_duration_seconds_count', { command: 'session.ingest' })).toBe(3);
    expect(sample(text, 'kyc_actor_step_duration_seconds_count', { command: 'voice.start' })).toBe(1);
    // Media is not configured here: a start mints a placeholder token, the one media call made.
    expect(sample(text, 'kyc_media_call_duration_seconds_count', { call: 'mintToken', outcome: 'ok' })).toBe(1);
  });

  it('keeps event types a client invents from growing the series without bound', async () => {
    const h = createHarness();
    for (let i = 0; i < MAX_OTHER_EVENT_TYPES + 10; i += 1) {
      await h.http
        .post('/v1/events')
        .send({ session_id: 's1', event: `invented_${i}` })
        .expect(200);
    }
    await h.http.post('/v1/events').send({ session_id: 's1', event: 'identity' }).expect(200);
    const text = await scrape(h);
    const series = text.split('\n').filter((line) => line.startsWith('kyc_events_ingested_total{'));
    expect(series).toHaveLength(MAX_OTHER_EVENT_TYPES + 2);
    expect(sample(text, 'kyc_events_ingested_total', { type: 'other' })).toBe(10);
    expect(sample(text, 'kyc_events_ingested_total', { type: 'identity' })).toBe(1);
  });

  it('labels HTTP requests by route template and status, never by raw path', async () => {
    const h = createHarness();
    await h.http.post('/v1/events').send({ session_id: 'secret-looking-id', event: 'identity' }).expect(200);
    await h.http.get('/api/sessions/secret-looking-id').expect(200);
    await h.http.get('/api/sessions/missing-one').expect(404);
    await h.http.get('/no/such/path-42').expect(404);

    const text = await scrape(h);
    expect(
      sample(text, 'kyc_http_request_duration_seconds_count', {
        route: '/api/sessions/:session_id',
        method: 'GET',
        status: '200',
      }),
    ).toBe(1);
    expect(
      sample(text, 'kyc_http_request_duration_seconds_count', {
        route: '/api/sessions/:session_id',
        method: 'GET',
        status: '404',
      }),
    ).toBe(1);
    expect(
      sample(text, 'kyc_http_request_duration_seconds_count', { route: '/v1/events', method: 'POST', status: '200' }),
    ).toBe(1);
    expect(sample(text, 'kyc_http_request_duration_seconds_count', { route: 'unmatched', status: '404' })).toBe(1);
    expect(text).not.toContain('secret-looking-id');
    expect(text).not.toContain('path-42');
  });

  it('counts open activity streams', async () => {
    const h = createHarness();
    const running = await serve(h);
    try {
      const stream = await SseTestClient.open(`${running.url}/api/activity/stream`);
      await stream.until((s) => s.retry !== undefined);
      expect(sample(await scrape(h), 'kyc_sse_connections')).toBe(1);
      stream.close();
      await stream.finished;
      await new Promise((resolve) => setImmediate(resolve));
      expect(sample(await scrape(h), 'kyc_sse_connections')).toBe(0);
    } finally {
      await running.close(100);
    }
  });

  it('counts open control-plane WebSockets', async () => {
    const h = createHarness();
    const running = await serve(h);
    try {
      const url = `${running.url.replace('http', 'ws')}/v1/events/ws`;
      const [first, second] = [await WsClient.open(url), await WsClient.open(url)];
      for (const ws of [first, second]) {
        ws.send({ type: 'heartbeat', message_id: 'hb' });
        await ws.nextOfType('heartbeat');
      }
      expect(sample(await scrape(h), 'kyc_ws_connections')).toBe(2);
      first.close();
      await first.whenClosed();
      await vi.waitFor(async () => expect(sample(await scrape(h), 'kyc_ws_connections')).toBe(1));
      second.close();
    } finally {
      await running.close(100);
    }
  });

  it('needs the API key like /api', async () => {
    const h = createHarness({ env: { API_KEY: 'k' } });
    expect((await h.http.get('/metrics')).status).toBe(401);
    expect((await h.http.get('/metrics').set('X-API-Key', 'wrong')).body).toEqual({ detail: 'invalid API key' });
    expect((await h.http.get('/metrics').set('X-API-Key', 'k')).status).toBe(200);
  });
});
