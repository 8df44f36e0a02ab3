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
  for (let i = 0; i < count; i += 1) expect((await h.http.post('/v1/events').send({ session_id: 's1', event: 'identity' })).status).toBe(200);
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
    const newIds = ((await later.http.get('/api/activity')).body.items as { id: string }[]).map((item) => Number(item.id));
    expect(Math.min(...newIds)).toBeGreaterThan(Math.max(...oldIds));

    const resumed = await open(await listen(later), { 'Last-Event-ID': String(oldIds.at(-1)) });
    await resumed.until((c) => c.ids.length === 2);
    const [reset] = resumed.messages;
    expect(reset!.event).toBe('reset');
    expect(JSON.parse(reset!.data)).toMatchObject({ reason: 'behind_buffer', requested_after: String(oldIds.at(-1)), oldest_id: String(newIds[0]) });
    expect(resumed.ids.map(Number)).toEqual(newIds);
  });
});

describe('every session held, running or hibernated, page by page', () => {
  it('pages in session_id order with filters on voice, screen and a prefix of the session or user id', async () => {
    for (const store of ['memory', 'sqlite']) {
      const h = createHarness({ env: { STORE: store, SESSION_HIBERNATE_SECONDS: '60' } });
      for (const [session, user, screen] of [['a1', 'u-x', 'pan_details'], ['a2', 'u-y', 'selfie'], ['b1', 'u-x', 'pan_details'], ['b2', 'v-z', 'otp']]) {
        await h.http.post('/v1/events').send({ session_id: session, user_id: user, event: 'screen_state', screen });
      }
      h.clock.increment(61_000);
      await h.http.post('/v1/assistant/session/start').send({ session_id: 'b2', screen: 'otp' });
      const { supervisor } = h.system;
      const first = supervisor.listSessions({ limit: 3 });
      expect(first.items.map((item) => [item.session_id, item.running])).toEqual([['a1', false], ['a2', false], ['b1', false]]);
      expect(supervisor.listSessions({ limit: 3, after: first.next! })).toMatchObject({ items: [{ session_id: 'b2', running: true, voice: 'active', screen: 'otp' }], next: null });
      expect(supervisor.listSessions({ limit: 10, voice: 'active' }).items.map((item) => item.session_id), store).toEqual(['b2']);
      expect(supervisor.listSessions({ limit: 10, screen: 'pan_details' }).items.map((item) => item.session_id)).toEqual(['a1', 'b1']);
      expect(supervisor.listSessions({ limit: 10, q: 'u-x' }).items.map((item) => item.session_id)).toEqual(['a1', 'b1']);
      expect(supervisor.listSessions({ limit: 10, q: 'b' }).items.map((item) => item.session_id)).toEqual(['b1', 'b2']);
      expect(supervisor.listSessions({ limit: 10, q: '%' }).items).toEqual([]);
    }
  });
});
