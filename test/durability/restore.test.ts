import { describe, expect, it } from 'vitest';
import { panInput } from '../fixtures/client-events.js';
import type { Harness, HarnessOptions } from '../support/harness.js';
import { START_TIME, advance, createHarness, restartAfterCrash } from '../support/harness.js';

const SECOND = 1000;
const sqlite = (env: Record<string, string> = {}): HarnessOptions => ({ env: { STORE: 'sqlite', ...env } });
const post = (h: Harness, body: object) => h.http.post('/v1/events').send(body);
const evaluate = (h: Harness, screen = 'pan_details') =>
  h.http
    .post('/v1/assistant/trigger/evaluate')
    .send({ session_id: 's1', signals: { screen, time_spent: 25, errors: [], idle_seconds: 0 } });
const startVoice = (h: Harness) =>
  h.http.post('/v1/assistant/session/start').send({ session_id: 's1', user_id: 'u1', screen: 'pan_details' });
const stopVoice = (h: Harness) => h.http.post('/v1/assistant/session/stop').send({ session_id: 's1' });
const reengagements = async (h: Harness) =>
  (await h.http.get('/api/activity?kind=reengagement')).body.items as {
    timestamp: string;
    due_at?: string;
    payload: { source: string };
  }[];

async function firedTrigger(h: Harness): Promise<void> {
  await post(h, { session_id: 's1', user_id: 'u1', event: 'screen_state', screen: 'pan_details' });
  await post(h, panInput('s1'));
  expect((await evaluate(h)).body.trigger).toBe(true);
}

describe('what was answered is kept (kill.test.ts proves it against SIGKILL)', () => {
  it('after a crash right after the replies, the new process finds every session and item, ids from 1 in order', async () => {
    const h = createHarness(sqlite());
    for (let i = 0; i < 20; i += 1)
      expect((await post(h, { session_id: `s${i % 3}`, event: 'screen_state', screen: `screen_${i}` })).status).toBe(
        200,
      );
    const after = restartAfterCrash(h);
    expect(after.system.sessionHost.size).toBe(3);
    expect((await after.http.get('/api/sessions/s2')).body.screen).toBe('screen_17');
    const items = (await after.http.get('/api/activity?limit=1000')).body.items as {
      id: string;
      payload: { screen: string };
    }[];
    expect(items.map((item) => item.payload.screen)).toEqual(Array.from({ length: 20 }, (_, i) => `screen_${i}`));
    expect(items.map((item) => Number(item.id))).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('activity ids never repeat across restarts, and SSE-style resume reads exactly what came after', async () => {
    const h = createHarness(sqlite());
    await post(h, { session_id: 's1', event: 'identity' });
    await post(h, { session_id: 's1', event: 'identity' });
    const second = restartAfterCrash(h);
    await post(second, { session_id: 's1', event: 'identity' });
    const third = restartAfterCrash(second);
    await post(third, { session_id: 's2', event: 'identity' });
    expect(third.system.activity.after(1).items.map((item) => item.id)).toEqual(['2', '3', '4']);
    expect(third.system.activity.bounds()).toEqual({ oldestId: 1, lastId: 4 });
  });
});

describe('what the service has seen across sessions is kept too', () => {
  it('a flow graph is recorded once per client and flow, not once per process', async () => {
    const h = createHarness(sqlite());
    const setFlow = (target: Harness, sessionId: string) =>
      target.http.post('/v1/flows/set').send({
        session_id: sessionId,
        client_id: 'tenant_x',
        flow_key: 'kyc_x',
        step_sequence: ['phone_entry', 'pan_details'],
        current_step: 'phone_entry',
      });
    expect((await setFlow(h, 'f1')).status).toBe(200);
    const after = restartAfterCrash(h);
    expect((await setFlow(after, 'f2')).status).toBe(200);
    const recorded = (await after.http.get('/api/activity?kind=flow_graph_recorded')).body.items as {
      session_id: string;
    }[];
    expect(recorded.map((item) => item.session_id)).toEqual(['f1']);
  });
});

describe('timers are re-armed from the deadlines the store keeps (simulated clock)', () => {
  it('the trigger cooldown: still running after the restart, ending at its original deadline', async () => {
    const h = createHarness(sqlite());
    await firedTrigger(h);
    advance(h.clock, 10 * SECOND);
    const after = restartAfterCrash(h);
    const cooling = await evaluate(after, 'otp');
    expect(cooling.body).toMatchObject({ trigger: false, reason: 'cooldown', retry_after_seconds: 50 });
    advance(after.clock, 49 * SECOND);
    expect((await evaluate(after, 'otp')).body).toMatchObject({ reason: 'cooldown', retry_after_seconds: 1 });
    advance(after.clock, 1 * SECOND);
    // The cooldown is over: the same screen is now held back only because it was prompted before.
    expect((await evaluate(after)).body).toMatchObject({ trigger: false, reason: 'already_prompted' });
  });

  it('the reengagement timer: fires once, at its original deadline, in the process that restarted', async () => {
    const h = createHarness(sqlite({ REENGAGEMENT_INACTIVITY_SECONDS: '300' }));
    await post(h, { session_id: 's1', event: 'identity' });
    await startVoice(h);
    await stopVoice(h);
    advance(h.clock, 100 * SECOND);
    const after = restartAfterCrash(h);
    advance(after.clock, 199 * SECOND);
    expect((await reengagements(after)).map((item) => item.payload.source)).toEqual(['session_stop']);
    advance(after.clock, 3 * SECOND);
    const fired = await reengagements(after);
    expect(fired.map((item) => item.payload.source)).toEqual(['session_stop', 'timer']);
    expect(fired[1]!.timestamp).toBe(new Date(START_TIME + 300 * SECOND).toISOString());
    advance(after.clock, 3600 * SECOND);
    expect(await reengagements(after)).toHaveLength(2);
  });

  /** A voice session stopped, the service down for an hour, started again: the reengagement due meanwhile fires once it is back. */
  async function downAnHourAfterStop(env: Record<string, string>): Promise<Harness> {
    const h = createHarness(sqlite({ REENGAGEMENT_INACTIVITY_SECONDS: '300', ...env }));
    await startVoice(h);
    await stopVoice(h);
    h.clock.set(START_TIME + 3600 * SECOND);
    const after = restartAfterCrash(h);
    advance(after.clock, 2 * SECOND);
    const fired = await reengagements(after);
    expect(fired.map((item) => item.payload.source)).toEqual(['session_stop', 'timer']);
    // Stamped when it fired, after the restart, and saying when it was due.
    expect(Date.parse(fired[1]!.timestamp)).toBeGreaterThanOrEqual(START_TIME + 3600 * SECOND);
    expect(fired[1]!.due_at).toBe(new Date(START_TIME + 300 * SECOND).toISOString());
    return after;
  }

  it('a deadline that passed while the service was down fires once, at start, and not again after another restart', async () => {
    const after = await downAnHourAfterStop({});
    const again = restartAfterCrash(after);
    advance(again.clock, 600 * SECOND);
    expect(await reengagements(again)).toHaveLength(2);
  });

  it('a reengagement due while the service was down still fires when the idle TTL ran out too, and the session goes after it', async () => {
    const after = await downAnHourAfterStop({ SESSION_IDLE_TTL_SECONDS: '600' });
    advance(after.clock, 600 * SECOND);
    expect(after.system.sessionHost.has('s1')).toBe(false);
  });

  it('the idle eviction: a session untouched for SESSION_IDLE_TTL_SECONDS is evicted at its original deadline, without being loaded before', async () => {
    const h = createHarness(sqlite({ SESSION_IDLE_TTL_SECONDS: '600' }));
    await post(h, { session_id: 's1', event: 'identity' });
    await post(h, { session_id: 's2', event: 'identity' });
    advance(h.clock, 100 * SECOND);
    await post(h, { session_id: 's2', event: 'identity' });
    const after = restartAfterCrash(h);
    expect(after.system.sessionHost.counts).toEqual({ running: 0, hibernated: 2 });
    advance(after.clock, 499 * SECOND);
    expect((await after.http.get('/api/sessions/s1')).status).toBe(200);
    advance(after.clock, 1 * SECOND);
    expect((await after.http.get('/api/sessions/s1')).status).toBe(404);
    expect((await after.http.get('/api/sessions/s2')).status).toBe(200);
    advance(after.clock, 100 * SECOND);
    expect((await after.http.get('/api/sessions/s2')).status).toBe(404);
    expect(after.system.sessionHost.size).toBe(0);
    expect(restartAfterCrash(after).system.sessionHost.size).toBe(0);
  });

  it('a running session its timer woke from the store, behind one touched since, still goes at its idle deadline', async () => {
    // Sessions stay running (no hibernation), so the idle check is what ends them, not the store's wake.
    const h = createHarness(sqlite({ SESSION_IDLE_TTL_SECONDS: '600', SESSION_HIBERNATE_SECONDS: '0' }));
    await firedTrigger(h);
    const after = restartAfterCrash(h);
    advance(after.clock, 30 * SECOND);
    await post(after, { session_id: 's2', event: 'identity' });
    // The cooldown's end wakes s1, which now runs after s2 in the order of recency.
    advance(after.clock, 30 * SECOND);
    expect(after.system.sessionHost.counts).toEqual({ running: 2, hibernated: 0 });
    advance(after.clock, 539 * SECOND);
    expect(after.system.sessionHost.has('s1')).toBe(true);
    advance(after.clock, 1 * SECOND);
    expect(after.system.sessionHost.has('s1')).toBe(false);
    expect(after.system.sessionHost.has('s2')).toBe(true);
    advance(after.clock, 30 * SECOND);
    expect(after.system.sessionHost.has('s2')).toBe(false);
  });

  it('a session read after a restart is the session as it was, without waking it', async () => {
    const h = createHarness(sqlite());
    await firedTrigger(h);
    const before = (await h.http.get('/api/sessions/s1')).body as Record<string, unknown>;
    const after = restartAfterCrash(h);
    expect((await after.http.get('/api/sessions/s1')).body).toEqual(before);
    expect(after.system.sessionHost.counts.running).toBe(0);
  });
});

describe('activity retention (SQLite)', () => {
  const draft = (at: number, n: number) => ({
    kind: 'event' as const,
    at,
    session_id: 's1',
    user_id: null,
    payload: { n },
    trace: { trace_id: 't', request_id: `r${n}` },
  });

  it('drops items older than ACTIVITY_RETENTION_DAYS, oldest first, and a resume from before them is told of the gap', async () => {
    const h = createHarness(sqlite({ ACTIVITY_RETENTION_DAYS: '30' }));
    const log = h.system.activity;
    for (let n = 1; n <= 3; n += 1) log.append(draft(h.clock.now(), n));
    await log.commit();
    h.clock.set(START_TIME + 31 * 86_400 * SECOND);
    log.append(draft(h.clock.now(), 4));
    await log.commit();
    expect(log.list({ limit: 10 }).map((item) => item.id)).toEqual(['4']);
    expect(log.after(1)).toMatchObject({ gap: true, items: [{ id: '4' }] });
    // After a restart, ids go on from the highest ever given.
    expect(restartAfterCrash(h).system.activity.append(draft(START_TIME, 5)).id).toBe('5');
  });

  it('keeps the newest ACTIVITY_RETENTION_ITEMS', async () => {
    const h = createHarness(sqlite({ ACTIVITY_RETENTION_ITEMS: '3' }));
    for (let n = 1; n <= 5; n += 1) h.system.activity.append(draft(START_TIME, n));
    await h.system.activity.commit();
    expect(h.system.activity.list({ limit: 10 }).map((item) => item.id)).toEqual(['3', '4', '5']);
    expect(h.system.activity.bounds()).toEqual({ oldestId: 3, lastId: 5 });
  });
});
