import { describe, expect, it } from 'vitest';
import { SESSION_OVERHEAD_BYTES } from '../../src/actor-system/memory-budget.js';
import type { Harness } from '../support/harness.js';
import { advance, createHarness, settle } from '../support/harness.js';
import { FILLER, stuffed } from '../support/stuffed-session.js';

// Runs on one store: each test names the store whose way of giving memory back it tests; vitest.config.ts.

const post = (h: Harness, body: object) => h.http.post('/v1/events').send(body);

describe('process-wide budget (MEMORY_BUDGET_MB): what each store gives back', () => {
  it('with STORE=memory, evicts hibernated sessions (still in memory), least recently touched first, before refusing anyone', async () => {
    const h = createHarness({ env: { MEMORY_BUDGET_MB: '64', SESSION_HIBERNATE_SECONDS: '60', STORE: 'memory' } });
    let admitted = 0;
    for (; admitted < 2000; admitted += 1) {
      if ((await post(h, stuffed(`old${admitted}`))).status !== 200) break;
    }
    advance(h.clock, 120_000);
    await settle();
    expect(h.system.sessionHost.counts.running).toBe(0);
    for (let i = 0; i < 20; i += 1) expect((await post(h, stuffed(`new${i}`))).status).toBe(200);
    expect(h.system.sessionHost.has('old0')).toBe(false);
    expect(h.system.sessionHost.has(`old${admitted - 1}`)).toBe(true);
    const { memory } = (await h.http.get('/health')).body;
    expect(memory.used_bytes).toBeLessThanOrEqual(memory.budget_bytes + 2 * 65_536 + SESSION_OVERHEAD_BYTES);
    expect(h.logs.text).toMatch(/"why":"memory".*session evicted/);
  });

  it('with STORE=sqlite, running sessions with nothing under way leave memory for the store instead: nobody is refused, nothing is lost', async () => {
    const h = createHarness({ env: { MEMORY_BUDGET_MB: '64', SESSION_HIBERNATE_SECONDS: '60', STORE: 'sqlite' } });
    // The sessions' half of 64 MiB holds about 250 such sessions.
    const count = 300;
    for (let i = 0; i < count; i += 1) expect((await post(h, stuffed(`s${i}`))).status, `s${i}`).toBe(200);
    const { memory } = (await h.http.get('/health')).body;
    expect(memory.used_bytes).toBeLessThanOrEqual(memory.budget_bytes + 2 * 65_536 + SESSION_OVERHEAD_BYTES);
    // Far more sessions than the budget holds in memory: the oldest went to disk, all are still there.
    expect(h.system.sessionHost.counts.running).toBeLessThan(count);
    expect(h.system.sessionHost.counts.hibernated).toBe(count - h.system.sessionHost.counts.running);
    expect(h.system.sessionHost.has('s0')).toBe(true);
    expect((await post(h, { session_id: 's0', event: 'screen_view', screen: 'b' })).status).toBe(200);
    expect(h.system.sessionHost.snapshot('s0')!.context.screen).toBe('b');
  });

  it(
    'a burst of sessions then in voice does not lock out new users: with STORE=sqlite they ' +
      'leave memory for the store, voice and all, and come back as they were',
    async () => {
      // The lockout seen at the defaults (6,847 sessions of 55 KB, each then starting voice: 503 for
      // every new session for 560 s), at a 64 MiB budget: sessions in voice could not hibernate.
      const h = createHarness({ env: { MEMORY_BUDGET_MB: '64', SESSION_HIBERNATE_SECONDS: '60', STORE: 'sqlite' } });
      // All but room for about 24 such sessions is held by another part of the service, so that
      // few requests make the burst (each stuffed session counts at about 130 KB).
      const room = 24 * 130_000;
      h.system.memoryBudget.hold('other parts', h.system.memoryBudget.budgetBytes - room);
      const burst = 40;
      // Eight users at a time, as a burst comes.
      const user = async (sessionId: string) => {
        await post(h, stuffed(sessionId));
        const started = await h.http
          .post('/v1/assistant/session/start')
          .send({ session_id: sessionId, screen: 'pan_details' });
        // Past the budget a new session is refused; what was admitted is in voice.
        if (started.status !== 200) expect(started.status).toBe(503);
      };
      for (let i = 0; i < burst; i += 8)
        await Promise.all(Array.from({ length: Math.min(8, burst - i) }, (_, j) => user(`burst${i + j}`)));
      const inVoice = (await h.http.get('/api/sessions?voice=active&limit=500')).body.sessions.length as number;
      expect(inVoice).toBeGreaterThan(burst / 2);
      // A few seconds later, well inside the voice sessions' silence check: new users are served.
      advance(h.clock, 5_000);
      for (let i = 0; i < 20; i += 1)
        expect(
          (await post(h, { session_id: `newcomer${i}`, event: 'screen_view', screen: 'a' })).status,
          `newcomer${i}`,
        ).toBe(200);
      const { memory } = (await h.http.get('/health')).body;
      expect(memory.used_bytes).toBeLessThanOrEqual(memory.budget_bytes + 2 * 65_536 + SESSION_OVERHEAD_BYTES);
      // The sessions that made room are intact and still in voice; a stop reaches the first of them.
      expect((await h.http.get('/api/sessions?voice=active&limit=500')).body.sessions.length).toBe(inVoice);
      expect(h.system.sessionHost.counts.hibernated).toBeGreaterThan(0);
      const stopped = await h.http.post('/v1/assistant/session/stop').send({ session_id: 'burst0' });
      expect(stopped.status).toBe(200);
      expect(stopped.body.active).toBe(false);
      expect(h.system.sessionHost.snapshot('burst0')!.context.latest_event?.properties).toMatchObject({ blob: FILLER });
    },
  );

  it('a session made to leave memory with its reengagement timer armed is woken from the store at its deadline and records the reengagement once', async () => {
    const h = createHarness({
      env: {
        MEMORY_BUDGET_MB: '64',
        SESSION_HIBERNATE_SECONDS: '60',
        STORE: 'sqlite',
        REENGAGEMENT_INACTIVITY_SECONDS: '600',
      },
    });
    await post(h, { session_id: 'timed', event: 'component_input', screen: 'pan_details' });
    await h.http.post('/v1/assistant/session/start').send({ session_id: 'timed', screen: 'pan_details' }).expect(200);
    // The stop arms the reengagement timer: the session cannot hibernate for ten minutes.
    await h.http.post('/v1/assistant/session/stop').send({ session_id: 'timed' }).expect(200);
    const budget = h.system.memoryBudget;
    budget.hold('other parts', budget.budgetBytes - budget.use().used_bytes);
    expect(budget.hasRoom).toBe(false);
    expect((await post(h, { session_id: 'newcomer', event: 'screen_view', screen: 'a' })).status).toBe(200);
    expect(h.system.sessionHost.counts).toEqual({ running: 1, hibernated: 1 });
    advance(h.clock, 600_000);
    await settle();
    // The stop recorded its own (not recommended yet); the timer's is the one that fired from the store.
    const fired = async () =>
      (
        (await h.http.get('/api/activity?kind=reengagement')).body.items as {
          session_id: string;
          payload: { source: string };
        }[]
      ).filter((item) => item.payload.source === 'timer');
    expect((await fired()).map((item) => item.session_id)).toEqual(['timed']);
    advance(h.clock, 600_000);
    await settle();
    expect(await fired()).toHaveLength(1);
  });
});
