import { describe, expect, it } from 'vitest';
import type { ActivityDraft } from '../../src/domain/activity.js';
import { openMemoryStore } from '../../src/store/memory-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import type { Harness } from '../support/harness.js';
import { START_TIME, createHarness, tempDataDir } from '../support/harness.js';

const SECOND = 1000;
const event = (sessionId: string) => ({ session_id: sessionId, event: 'component_input', screen: 'pan_details' });
type Listed = {
  id: string;
  kind: string;
  timestamp: string;
  due_at?: string;
  session_id: string;
  payload: Record<string, unknown>;
};
const listed = async (h: Harness) => (await h.http.get('/api/activity?limit=1000')).body.items as Listed[];

/** Ids and times along the list (oldest first): both never go backwards. */
function expectInTimeOrder(items: Listed[]): void {
  for (let n = 1; n < items.length; n += 1) {
    expect(Number(items[n]!.id)).toBeGreaterThan(Number(items[n - 1]!.id));
    expect(Date.parse(items[n]!.timestamp)).toBeGreaterThanOrEqual(Date.parse(items[n - 1]!.timestamp));
  }
}

describe('activity items are stamped when recorded, in time order', () => {
  it('a reengagement timer that fires late (the process was down when it was due) is stamped when it fires and says when it was due', async () => {
    const h = createHarness({ env: { STORE: 'sqlite', REENGAGEMENT_INACTIVITY_SECONDS: '120' } });
    await h.http.post('/v1/events').send(event('s1'));
    expect(
      (await h.http.post('/v1/assistant/session/start').send({ session_id: 's1', screen: 'pan_details' })).status,
    ).toBe(200);
    // The stop arms the timer: due 120 s from now.
    expect((await h.http.post('/v1/assistant/session/stop').send({ session_id: 's1' })).status).toBe(200);
    const dueAt = h.clock.now() + 120 * SECOND;
    // The process dies, and comes back five minutes later, past the timer's due time.
    (h.store.sessions as SqliteStore).abandon();
    h.sdkConfig.close();
    const again = createHarness({ env: h.env, startAt: h.clock.now() + 300 * SECOND });
    const restartedAt = again.clock.now();
    // Another session is recorded first; then the wake brings s1 back and its overdue timer fires.
    await again.http.post('/v1/events').send(event('s2'));
    again.clock.increment(1);
    again.clock.increment(1);
    const items = await listed(again);
    const timer = items.find((item) => item.kind === 'reengagement' && item.payload.source === 'timer');
    expect(timer).toBeDefined();
    expect(Date.parse(timer!.timestamp)).toBeGreaterThanOrEqual(restartedAt);
    expect(timer!.due_at).toBe(new Date(dueAt).toISOString());
    const s2 = items.find((item) => item.session_id === 's2')!;
    expect(Number(timer!.id)).toBeGreaterThan(Number(s2.id));
    expectInTimeOrder(items);
    // Only a timer's item says when it was due.
    expect(items.filter((item) => item.due_at !== undefined)).toEqual([timer]);
  });

  it('a timer on time is stamped at its due time, which is then also its due_at', async () => {
    const h = createHarness({ env: { REENGAGEMENT_INACTIVITY_SECONDS: '120' } });
    await h.http.post('/v1/events').send(event('s1'));
    await h.http.post('/v1/assistant/session/start').send({ session_id: 's1', screen: 'pan_details' });
    await h.http.post('/v1/assistant/session/stop').send({ session_id: 's1' });
    const dueAt = h.clock.now() + 120 * SECOND;
    h.clock.increment(120 * SECOND);
    const items = await listed(h);
    const timer = items.find((item) => item.kind === 'reengagement' && item.payload.source === 'timer')!;
    expect(timer).toMatchObject({ timestamp: new Date(dueAt).toISOString(), due_at: new Date(dueAt).toISOString() });
    expectInTimeOrder(items);
  });

  it.each(['memory', 'sqlite'] as const)(
    'the %s log never gives a later id an earlier time, across a restart too',
    (kind) => {
      const draft = (at: number): ActivityDraft => ({
        kind: 'event',
        at,
        session_id: 's1',
        user_id: null,
        payload: {},
        trace: { trace_id: 't', request_id: 'r' },
      });
      const dataDir = tempDataDir();
      const open = () =>
        kind === 'memory'
          ? openMemoryStore(100, START_TIME).activity
          : new SqliteStore({ dataDir, sync: 'normal', retentionItems: 100, retentionDays: 0, now: () => START_TIME });
      const log = open();
      const stamps = [START_TIME + 5_000, START_TIME + 1_000, START_TIME + 7_000].map(
        (at) => log.append(draft(at)).timestamp,
      );
      expect(stamps).toEqual(
        [START_TIME + 5_000, START_TIME + 5_000, START_TIME + 7_000].map((at) => new Date(at).toISOString()),
      );
      if (kind === 'memory') return;
      const sqlite = log as SqliteStore;
      sqlite.close();
      const reopened = open();
      // The clock went back after the restart: the time goes on from the newest item's.
      expect(reopened.append(draft(START_TIME)).timestamp).toBe(new Date(START_TIME + 7_000).toISOString());
      (reopened as SqliteStore).close();
    },
  );
});
