import { connect } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ActivityItem } from '../../src/domain/activity.js';
import type { RunningServer } from '../../src/http/server.js';
import type { Harness } from '../support/harness.js';
import { activityIds, createHarness, serve, settle } from '../support/harness.js';
import { SseTestClient } from '../support/sse-client.js';

const running: RunningServer[] = [];
const cleanups: (() => unknown)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  await Promise.all(running.splice(0).map((server) => server.close(100)));
});

function record(h: Harness, count: number, payload: Record<string, unknown> = {}): void {
  for (let i = 0; i < count; i += 1) {
    h.system.activity.append({
      kind: 'event',
      at: h.clock.now(),
      session_id: 's1',
      user_id: null,
      payload: { n: i, ...payload },
      trace: { trace_id: 't', request_id: 'r' },
    });
  }
}

/** Records `count` items and waits until the log has committed them (at the end of the turn for SQLite). */
async function burst(h: Harness, count: number, payload: Record<string, unknown> = {}): Promise<void> {
  record(h, count, payload);
  await h.system.activity.commit();
  await settle();
}

/** A reader that keeps the ids it was given, in order. */
function collector(h: Harness, name: string): { ids: string[]; stop(): void } {
  const ids: string[] = [];
  const subscription = h.system.activityActor.subscribe(name, (item) => ids.push(item.id));
  return { ids, stop: () => subscription.unsubscribe() };
}

const eventsCounted = async (h: Harness): Promise<number> => {
  const text = (await h.http.get('/metrics')).text;
  const line = text.split('\n').find((l) => l.startsWith('kyc_activity_items_total{kind="event"}'));
  return line ? Number(line.split(' ').pop()) : 0;
};

const patient = { timeout: 10_000 };

describe('the activity actor: every committed item to every reader', () => {
  it('gives each reader every item of a burst once, in id order, and keeps the tail', async () => {
    const h = createHarness();
    const first = collector(h, 'first');
    const second = collector(h, 'second');
    const before = h.system.activityActor.tail();
    expect(before.newest_id).toBe(h.firstActivityId - 1);
    expect(before.readers.map((entry) => entry.reader)).toEqual(['metrics', 'flow_graphs', 'first', 'second']);

    await burst(h, 1500);
    await burst(h, 500);

    const expected = activityIds(h, 1, 2000);
    expect(first.ids).toEqual(expected);
    expect(second.ids).toEqual(expected);
    const tail = h.system.activityActor.tail();
    expect(tail).toMatchObject({ newest_id: Number(expected.at(-1)), taken: 2000, skipped: 0 });
    expect(tail.by_kind.event).toBe(2000);
    expect(tail.by_kind.trigger).toBe(0);
    // The metrics are a reader like the others.
    expect(await eventsCounted(h)).toBe(2000);

    second.stop();
    await burst(h, 3);
    expect(first.ids).toHaveLength(2003);
    expect(second.ids).toHaveLength(2000);
    expect(h.system.activityActor.readerNames()).toEqual(['metrics', 'flow_graphs', 'first']);
    h.system.stop();
  });

  it('a reader that throws is logged once and counted; the readers after it still get every item, and it gets later ones', async () => {
    const h = createHarness();
    const before = collector(h, 'before');
    const tried: string[] = [];
    h.system.activityActor.subscribe('broken', (item) => {
      tried.push(item.id);
      throw new Error('reader bug');
    });
    const after = collector(h, 'after');

    await burst(h, 300);
    // Requests that record activity are still answered: the log is not disturbed by a reader's failure.
    expect((await h.http.post('/v1/events').send({ session_id: 's2', event: 'identity' })).status).toBe(200);
    await h.system.activity.commit();
    await settle();

    expect(before.ids).toHaveLength(301);
    expect(after.ids).toEqual(before.ids);
    expect(tried).toEqual(before.ids);
    expect(h.system.activityActor.tail().readers.find((entry) => entry.reader === 'broken')).toEqual({
      reader: 'broken',
      failures: 301,
    });
    const failures = h.logs
      .parsed()
      .filter((line) => line.msg === 'activity reader failed; the other readers were given the item');
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ reader: 'broken', failures: 1, level: 50, err: { message: 'reader bug' } });
    h.system.stop();
  });

  it('an item a reader records while it is given another reaches every reader after that one', async () => {
    const h = createHarness();
    const seen: { reader: string; id: string; n: unknown }[] = [];
    // The first reader answers item n=1 with an item of its own, synchronously, from inside the delivery.
    h.system.activityActor.subscribe('answering', (item: ActivityItem) => {
      seen.push({ reader: 'answering', id: item.id, n: item.payload.n });
      if (item.payload.n === 1) record(h, 1, { n: 'answer' });
    });
    h.system.activityActor.subscribe('watching', (item) =>
      seen.push({ reader: 'watching', id: item.id, n: item.payload.n }),
    );

    await burst(h, 3);
    await h.system.activity.commit();
    await settle();

    const order = (reader: string) => seen.filter((entry) => entry.reader === reader).map((entry) => entry.n);
    // Memory appends at once (the answer comes right after item 1); SQLite commits it with the next batch (after item 2).
    const expected = h.config.store.kind === 'memory' ? [0, 1, 'answer', 2] : [0, 1, 2, 'answer'];
    expect(order('answering')).toEqual(expected);
    expect(order('watching')).toEqual(expected);
    const ids = seen.filter((entry) => entry.reader === 'watching').map((entry) => Number(entry.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    h.system.stop();
  });

  it('a stream that stops reading is cut as the stream policy says, while the others and the metrics get every item in order', async () => {
    const h = createHarness({ env: { ACTIVITY_BUFFER_SIZE: '5000' } });
    const server = await serve(h);
    running.push(server);
    const readers = await Promise.all([0, 1].map(() => SseTestClient.open(`${server.url}/api/activity/stream`)));
    for (const client of readers) cleanups.push(() => client.close());
    await Promise.all(readers.map((client) => client.until((c) => c.retry !== undefined)));

    // The stalled client: a raw socket that reads the response head, then nothing.
    const socket = connect(server.port, '127.0.0.1');
    socket.on('error', () => undefined);
    cleanups.push(() => socket.destroy());
    let received = 0;
    socket.on('data', (chunk: Buffer) => (received += chunk.length));
    socket.write('GET /api/activity/stream HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n');
    await vi.waitFor(() => expect(received).toBeGreaterThan(0), patient);
    socket.pause();
    await vi.waitFor(() => expect(h.app.activityStreams.stats().streams).toBe(3), patient);
    const marker = collector(h, 'marker');

    // A burst stays under the per-stream cap (1 MiB): a reader that drains between bursts is never near it.
    const blob = 'x'.repeat(64 * 1024);
    const perBurst = 8;
    let recorded = 0;
    // Until the stalled stream is cut, then as many again: the others go on as before.
    let cutAt: number | undefined;
    while (recorded < 600 && (cutAt === undefined || recorded < 2 * cutAt)) {
      await burst(h, perBurst, { blob });
      recorded += perBurst;
      if (cutAt === undefined && h.app.activityStreams.stats().streams === 2) cutAt = recorded;
      // The readers drain as they go; the stalled one only fills.
      await Promise.all(readers.map((client) => client.until((c) => c.ids.length === recorded, 10_000)));
    }
    expect(cutAt).toBeDefined();

    const expected = activityIds(h, 1, recorded);
    for (const client of readers) expect(client.ids).toEqual(expected);
    expect(marker.ids).toEqual(expected);
    expect(h.app.activityStreams.stats().streams).toBe(2);
    expect(h.logs.text).toContain('activity stream cut: client not reading');
    expect(await eventsCounted(h)).toBe(recorded);
    // The hub is one reader, however many streams it serves.
    expect(h.system.activityActor.readerNames()).toEqual(['metrics', 'flow_graphs', 'sse', 'marker']);
    h.system.stop();
  }, 30_000);
});
