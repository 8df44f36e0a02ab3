import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { numericId } from '../src/store/redis-activity-log.js';
import { startService } from '../test/support/service-process.js';
import { SseTestClient } from '../test/support/sse-client.js';
import { startRedis, type RedisServer } from '../scripts/cluster/redis-server.js';

let redis: RedisServer;
const started: ReturnType<typeof startService>[] = [];
const clients: SseTestClient[] = [];

beforeAll(async () => void (redis = await startRedis()));
afterAll(async () => {
  for (const client of clients) client.close();
  for (const service of started)
    if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
  await redis.stop();
});

/** Each test on its own Redis database, so the stream starts empty. */
async function node(db: number): Promise<string> {
  return (await nodeProcess(db)).url;
}

async function nodeProcess(db: number): Promise<{ url: string; logs: () => string }> {
  const service = startService({ STORE: 'memory', ACTIVITY_LOG: `${redis.url}/${db}` });
  started.push(service);
  return { url: await service.url, logs: service.logs };
}

/** XREAD calls the server has answered, from every client. */
async function xreadCalls(): Promise<number> {
  const client = new Redis(redis.url);
  try {
    const stats = await client.info('commandstats');
    return Number(/cmdstat_xread:calls=(\d+)/.exec(stats)?.[1] ?? 0);
  } finally {
    client.disconnect();
  }
}

async function post(url: string, sessionId: string): Promise<void> {
  const response = await fetch(`${url}/v1/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ session_id: sessionId, event: 'identity' }),
  });
  expect(response.status).toBe(200);
}

async function activity(url: string, query = ''): Promise<{ id: string; session_id: string }[]> {
  const response = await fetch(`${url}/api/activity?limit=200${query}`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { items: { id: string; session_id: string }[] }).items;
}

async function streamIds(db: number): Promise<string[]> {
  const client = new Redis(`${redis.url}/${db}`);
  try {
    const entries = await client.xrange('{kyc-activity}', '-', '+');
    return entries.map(([id]) => String(numericId(id)));
  } finally {
    client.disconnect();
  }
}

describe('ACTIVITY_LOG=redis:// with two service processes on one stream', () => {
  it('every response sees its own write; both nodes list the same items with the stream ids, each written once', async () => {
    const key = 1;
    const [a, b] = await Promise.all([node(key), node(key)]);
    for (let i = 0; i < 10; i += 1) {
      const [url, sessionId] = i % 2 === 0 ? [a, 'sa'] : [b, 'sb'];
      await post(url, sessionId);
      const own = await activity(url, `&session_id=${sessionId}`);
      expect(own.length).toBe(Math.floor(i / 2) + 1);
    }
    const ids = await streamIds(key);
    expect(ids).toHaveLength(10);
    const fromA = await activity(a);
    let fromB = await activity(b);
    // B may be a tail read behind A's last write: wait for it by polling its list.
    for (let tries = 0; fromB.length < 10 && tries < 50; tries += 1) fromB = await activity(b);
    expect(fromA.map((item) => item.id)).toEqual(ids);
    expect(fromB.map((item) => item.id)).toEqual(ids);
    expect(fromA.map((item) => item.session_id)).toEqual(['sa', 'sb', 'sa', 'sb', 'sa', 'sb', 'sa', 'sb', 'sa', 'sb']);
    expect(new Set(ids).size).toBe(10);
  });

  it('an SSE client resuming with Last-Event-ID on the other node gets exactly what it missed', async () => {
    const key = 2;
    const [a, b] = await Promise.all([node(key), node(key)]);
    const first = await SseTestClient.open(`${a}/api/activity/stream`);
    clients.push(first);
    await first.until((c) => c.retry !== undefined);
    for (let i = 0; i < 3; i += 1) await post(i % 2 === 0 ? a : b, 's-sse');
    await first.until((c) => c.ids.length === 3);
    first.close();
    for (let i = 0; i < 2; i += 1) await post(a, 's-sse');
    const resumed = await SseTestClient.open(`${b}/api/activity/stream`, { 'Last-Event-ID': first.ids.at(-1)! });
    clients.push(resumed);
    await resumed.until((c) => c.ids.length === 2);
    await post(a, 's-sse');
    await resumed.until((c) => c.ids.length === 3);
    expect(resumed.messages.map((message) => message.event)).toEqual(['activity', 'activity', 'activity']);
    expect([...first.ids, ...resumed.ids]).toEqual(await streamIds(key));
  });

  it('an entry whose JSON is damaged is left out of listings and catch-ups, not a failure of every read', async () => {
    const key = 3;
    const { url, logs } = await nodeProcess(key);
    await post(url, 's-ok');
    const client = new Redis(`${redis.url}/${key}`);
    try {
      await client.xadd('{kyc-activity}', '*', 'item', '{broken');
      // JSON, but not an item.
      await client.xadd('{kyc-activity}', '*', 'item', '{"kind":1}');
    } finally {
      client.disconnect();
    }
    await post(url, 's-ok');
    const ids = await streamIds(key);
    expect(ids).toHaveLength(4);
    const listed = await activity(url);
    expect(listed.map((item) => item.id)).toEqual([ids[0], ids[3]]);
    const caughtUp = await SseTestClient.open(`${url}/api/activity/stream`, { 'Last-Event-ID': '1' });
    clients.push(caughtUp);
    await caughtUp.until((c) => c.ids.length === 2);
    expect(caughtUp.ids).toEqual([ids[0], ids[3]]);
    const reported = logs()
      .split('\n')
      .map((line) => /"msg":"activity item (\d+) unreadable; left out of reads"/.exec(line)?.[1])
      .filter((id) => id !== undefined);
    expect(reported).toEqual([ids[1], ids[2]]);
  });

  it('a damaged entry last in the stream is read past once, not re-read in a loop', async () => {
    const key = 4;
    const url = await node(key);
    await post(url, 's-ok');
    const client = new Redis(`${redis.url}/${key}`);
    try {
      await client.xadd('{kyc-activity}', '*', 'item', '{broken');
    } finally {
      client.disconnect();
    }
    // The tail blocks a second per read when nothing is new; read again and again at the damaged entry, it would call thousands of times.
    const before = await xreadCalls();
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect((await xreadCalls()) - before).toBeLessThan(100);
    await post(url, 's-ok');
    expect((await activity(url)).length).toBe(2);
  });

  it('with sessions kept in the process, calls and erasure answer 501 naming why, and change nothing', async () => {
    const url = await node(5);
    await post(url, 's-calls');
    for (const [method, path] of [
      ['GET', '/api/sessions/s-calls/calls'],
      ['GET', '/api/calls/c1'],
      ['GET', '/api/webhooks/deliveries'],
      ['DELETE', '/api/users/u1'],
    ] as const) {
      const response = await fetch(url + path, { method });
      expect(response.status, path).toBe(501);
      expect(((await response.json()) as { detail: string }).detail).toMatch(/ACTIVITY_LOG/);
    }
    expect((await activity(url, '&session_id=s-calls')).length).toBe(1);
  });
});
