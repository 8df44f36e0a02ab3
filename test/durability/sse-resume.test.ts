import { afterEach, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/http/server.js';
import type { Harness, HarnessOptions } from '../support/harness.js';
import { createHarness, restartAfterCrash, serve } from '../support/harness.js';
import { SseTestClient } from '../support/sse-client.js';

const running: RunningServer[] = [];
const clients: SseTestClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await Promise.all(running.splice(0).map((server) => server.close(100)));
});

async function listen(h: Harness): Promise<string> {
  const server = await serve(h);
  running.push(server);
  return server.url;
}

async function open(url: string, headers: Record<string, string> = {}): Promise<SseTestClient> {
  const client = await SseTestClient.open(`${url}/api/activity/stream`, headers);
  clients.push(client);
  return client;
}

const ingest = async (h: Harness, count: number) => {
  for (let i = 0; i < count; i += 1)
    expect((await h.http.post('/v1/events').send({ session_id: 's1', event: 'identity' })).status).toBe(200);
};

describe('SSE resume across a restart', () => {
  it('SQLite: a dashboard resuming with Last-Event-ID gets exactly what it missed, with no reset', async () => {
    const h = createHarness({ env: { STORE: 'sqlite' } });
    const url = await listen(h);
    const before = await open(url);
    await before.until((c) => c.retry !== undefined);
    await ingest(h, 3);
    await before.until((c) => c.ids.length === 3);
    before.close();
    await ingest(h, 2);

    const after = restartAfterCrash(h);
    await ingest(after, 2);
    const resumed = await open(await listen(after), { 'Last-Event-ID': before.ids.at(-1)! });
    await resumed.until((c) => c.ids.length === 4);
    expect(resumed.messages.map((message) => message.event)).toEqual(['activity', 'activity', 'activity', 'activity']);
    expect([...before.ids, ...resumed.ids]).toEqual(['1', '2', '3', '4', '5', '6', '7']);
  });

  it('memory: ids carry the process epoch, so an id from before the restart is told of the loss and gets everything held', async () => {
    const options: HarnessOptions = { env: { STORE: 'memory' } };
    const h = createHarness(options);
    await ingest(h, 2);
    const oldIds = ((await h.http.get('/api/activity')).body.items as { id: string }[]).map((item) => Number(item.id));

    const later = createHarness({ ...options, startAt: h.clock.now() + 1000 });
    await ingest(later, 2);
    const newIds = ((await later.http.get('/api/activity')).body.items as { id: string }[]).map((item) =>
      Number(item.id),
    );
    expect(Math.min(...newIds)).toBeGreaterThan(Math.max(...oldIds));

    const resumed = await open(await listen(later), { 'Last-Event-ID': String(oldIds.at(-1)) });
    await resumed.until((c) => c.ids.length === 2);
    const [reset] = resumed.messages;
    expect(reset!.event).toBe('reset');
    expect(JSON.parse(reset!.data)).toMatchObject({
      reason: 'behind_buffer',
      requested_after: String(oldIds.at(-1)),
      oldest_id: String(newIds[0]),
    });
    expect(resumed.ids.map(Number)).toEqual(newIds);
  });
});

describe('every session held, running or hibernated, page by page (GET /api/sessions over the store)', () => {
  it('pages in session_id order with filters on voice, screen and text, hibernated sessions read from the store', async () => {
    for (const store of ['memory', 'sqlite']) {
      const h = createHarness({ env: { STORE: store, SESSION_HIBERNATE_SECONDS: '60' } });
      for (const [session, user, screen] of [
        ['a1', 'u-x', 'pan_details'],
        ['a2', 'u-y', 'selfie'],
        ['b1', 'u-x', 'pan_details'],
        ['b2', 'v-z', 'otp'],
      ]) {
        await h.http.post('/v1/events').send({ session_id: session, user_id: user, event: 'screen_state', screen });
      }
      h.clock.increment(61_000);
      await h.http.post('/v1/assistant/session/start').send({ session_id: 'b2', screen: 'otp' });
      const list = async (query: Record<string, string>) =>
        (
          await h.http
            .get('/api/sessions')
            .query({ sort: 'session_id', order: 'asc', ...query })
            .expect(200)
        ).body;
      const ids = (page: { sessions: { session_id: string }[] }) => page.sessions.map((item) => item.session_id);
      const first = await list({ limit: '3' });
      expect(
        first.sessions.map((item: { session_id: string; status: string }) => [item.session_id, item.status]),
        store,
      ).toEqual([
        ['a1', 'hibernated'],
        ['a2', 'hibernated'],
        ['b1', 'hibernated'],
      ]);
      expect(first.total).toBe(4);
      const second = await list({ limit: '3', cursor: first.next_cursor });
      expect(second).toMatchObject({
        sessions: [{ session_id: 'b2', status: 'running', voice: 'active', screen: 'otp' }],
        next_cursor: null,
      });
      expect(ids(await list({ voice: 'active' })), store).toEqual(['b2']);
      expect(ids(await list({ screen: 'pan_details' }))).toEqual(['a1', 'b1']);
      expect(ids(await list({ q: 'u-x' }))).toEqual(['a1', 'b1']);
      expect(ids(await list({ q: 'b' }))).toEqual(['b1', 'b2']);
      expect(ids(await list({ q: '%' }))).toEqual([]);
    }
  });
});
