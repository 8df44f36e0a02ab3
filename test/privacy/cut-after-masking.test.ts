import { afterEach, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/http/server.js';
import { createHarness, serve } from '../support/harness.js';
import { WsClient } from '../support/ws-client.js';

/**
 * Where the service cuts client text short (an echoed message id, a 422's path, a logged header),
 * it masks first: cut first, nine characters of a PAN (`ABCDE1234`) would be left, which reads
 * as no whole value. And values spelled across keys, or carried in a fraction, are read as values.
 */
const PAN = 'ABCDE1234F';
const open: { servers: RunningServer[]; clients: WsClient[] } = { servers: [], clients: [] };

afterEach(async () => {
  for (const client of open.clients.splice(0)) client.close();
  for (const server of open.servers.splice(0)) await server.close(100);
});

describe('client text cut short is masked before the cut', () => {
  it("a WebSocket error echoes a long message_id masked, never the PAN's first nine characters", async () => {
    const h = createHarness();
    const server = await serve(h);
    open.servers.push(server);
    const ws = await WsClient.open(`${server.url.replace('http', 'ws')}/v1/events/ws`);
    open.clients.push(ws);
    ws.send({ type: 'bogus', message_id: `${'m'.repeat(118)} ${PAN}` });
    const error = await ws.nextOfType('error');
    expect(error.message_id).toBe(`${'m'.repeat(118)} *********`);
    expect(JSON.stringify(error)).not.toContain('ABCDE');
  });

  it("a 422 naming a too-deep path shows a long key masked, never the PAN's first nine characters", async () => {
    const h = createHarness();
    let nested: Record<string, unknown> = {};
    for (let level = 0; level < 33; level += 1) nested = { a: nested };
    const res = await h.http
      .post('/v1/events')
      .send({ session_id: 's1', event: 'x', properties: { [`${'x'.repeat(30)} ${PAN}`]: nested } });
    expect(res.status).toBe(422);
    expect(res.body.detail).toContain(`${'x'.repeat(30)} *********`);
    expect(res.body.detail).not.toContain('ABCDE');
  });

  it("a logged correlation header is masked, then cut: never the PAN's first nine characters", async () => {
    const h = createHarness();
    await h.http
      .post('/v1/events')
      .set('X-Request-ID', 'cut-1')
      .set('X-SVC-Session-ID', `${'a'.repeat(54)}-${PAN}`)
      .send({ session_id: 's1', event: 'identity' });
    const line = h.logs.parsed().find((entry) => (entry.req as { id?: string } | undefined)?.id === 'cut-1');
    // No identifier (a PAN inside): masked whole, then cut.
    expect(line).toMatchObject({ svc_session_id: `${'*'.repeat(54)}-*********…` });
    expect(h.logs.text).not.toContain('ABCDE');
  });
});

describe('values the pass reads beyond a string', () => {
  it('masks a mobile number carried in a fraction, as it does the integer', async () => {
    const h = createHarness();
    await h.http
      .post('/v1/events')
      .send({ session_id: 's1', event: 'x', properties: { contact: 9876543210.5, score: 0.75, big: 123.5 } });
    const { body } = await h.http.get('/api/sessions/s1');
    const properties = body.latest_event.properties as Record<string, unknown>;
    expect(JSON.stringify(properties.contact)).not.toContain('98765');
    expect(properties).toMatchObject({ score: 0.75, big: 123.5 });
  });

  it('masks a value that harmless keys spell when the pass joins them into a path', async () => {
    const h = createHarness();
    await h.http.post('/v1/events').send({
      session_id: 's1',
      event: 'x',
      properties: { '98765': { '43210': PAN }, '2345': { '6789': { '0124': { phone: 'x' } } } },
    });
    const { body } = await h.http.get('/api/sessions/s1');
    const paths = (body.latest_event.redacted_fields as { path: string }[]).map((field) => field.path);
    expect(paths.length).toBeGreaterThan(0);
    for (const path of paths) {
      expect(path).not.toMatch(/98765.43210/);
      expect(path).not.toMatch(/2345.6789/);
    }
  });
});
