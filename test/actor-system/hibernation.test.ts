import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { sessionMachine } from '../../src/machines/session/machine.js';
import { canHibernate, HIBERNATION_STATE } from '../../src/machines/session/persistence.js';
import type { Harness } from '../support/harness.js';
import { panInput } from '../fixtures/client-events.js';
import { advance, createHarness, settle } from '../support/harness.js';

const SECOND = 1000;

const counts = (h: Harness) => h.system.sessionHost.counts;
const post = (h: Harness, body: object) => h.http.post('/v1/events').send(body);
const evaluate = (h: Harness, screen: string) =>
  h.http
    .post('/v1/assistant/trigger/evaluate')
    .send({ session_id: 's1', signals: { screen, time_spent: 25, errors: [], idle_seconds: 0 } });

describe('hibernation (SESSION_HIBERNATE_SECONDS)', () => {
  it('is the initial state of the session machine, so a session brought back from its context is where it was', () => {
    const settings = {
      schemaRegistry: true,
      criticalSteps: [],
      mediaReady: false,
      mediaRoomPrefix: 'kyc-',
      reengagementInactivitySeconds: 60,
      idleTtlMs: 60_000,
      sessionMaxBytes: 65_536,
      voiceSilenceMs: 300_000,
      agentJoinMs: 10_000,
      agentDispatchAttempts: 3,
      roomCheckMs: 30_000,
    };
    const actor = createActor(sessionMachine, { input: { sessionId: 's', at: 0, settings } }).start();
    expect(actor.getSnapshot().value).toEqual(HIBERNATION_STATE);
    expect(canHibernate(actor.getSnapshot())).toBe(true);
    actor.stop();
  });

  it('holds an untouched session as its context and brings it back, state intact, on the next command', async () => {
    const h = createHarness({ env: { SESSION_HIBERNATE_SECONDS: '60' } });
    await post(h, { session_id: 's1', user_id: 'u1', event: 'screen_state', screen: 'pan_details' });
    await post(h, panInput('s1'));
    expect((await evaluate(h, 'pan_details')).body.trigger).toBe(true);

    // Due at 60 s, but the trigger's 60 s cooldown is still running then: a busy session is
    // looked at again one hibernation delay later.
    advance(h.clock, 60 * SECOND);
    expect(counts(h)).toEqual({ running: 1, hibernated: 0 });
    const before = (await h.http.get('/api/sessions/s1')).body as Record<string, unknown>;
    advance(h.clock, 60 * SECOND);
    expect(counts(h)).toEqual({ running: 0, hibernated: 1 });

    // Reading does not wake it, and reads the same session.
    expect((await h.http.get('/api/sessions/s1')).body).toEqual(before);
    expect(counts(h)).toEqual({ running: 0, hibernated: 1 });

    await post(h, {
      session_id: 's1',
      event: 'component_input',
      screen: 'pan_details',
      component_id: 'terms',
      component_type: 'checkbox',
      hint: 'checked',
      masked: false,
    });
    expect(counts(h)).toEqual({ running: 1, hibernated: 0 });
    // Operators see both at LOG_LEVEL=debug.
    const lifecycle = h.logs
      .parsed()
      .filter((line) => line.session_id === 's1' && String(line.msg).startsWith('session '));
    expect(lifecycle.map((line) => line.msg)).toEqual(['session hibernated', 'session woken']);
    const after = (await h.http.get('/api/sessions/s1')).body as {
      user_id: string;
      component_hints: { component_id: string }[];
    };
    expect(after.user_id).toBe('u1');
    expect(after.component_hints.map((hint) => hint.component_id)).toEqual(['pan', 'terms']);
    // The trigger memory came back too: the screen was already prompted.
    expect((await evaluate(h, 'pan_details')).body).toMatchObject({ trigger: false, reason: 'already_prompted' });
  });

  it('wakes holding the schema objects that running sessions registered alike, not copies of them', async () => {
    const h = createHarness({ env: { SESSION_HIBERNATE_SECONDS: '60' } });
    const schema = {
      screen_id: 'pan_details',
      components: [
        { id: 'pan_field', type: 'text_input', validations: [{ rule_id: 'pan_v1', pattern: '[A-Z]{5}[0-9]{4}[A-Z]' }] },
      ],
    };
    for (const session_id of ['s1', 's2'])
      await post(h, { session_id, event: 'screen_schema', screen: 'pan_details', properties: schema });
    const held = (sessionId: string) => h.system.sessionHost.snapshot(sessionId)!.context.schemas.pan_details;
    expect(held('s2')).toBe(held('s1'));
    advance(h.clock, 50 * SECOND);
    await post(h, { session_id: 's1', event: 'identity' });
    advance(h.clock, 20 * SECOND);
    expect(counts(h)).toEqual({ running: 1, hibernated: 1 });
    // With STORE=sqlite the hibernated session lives only in the file and wakes from what it wrote.
    await post(h, { session_id: 's2', event: 'identity' });
    expect(counts(h)).toEqual({ running: 2, hibernated: 0 });
    expect(held('s2')).toBe(held('s1'));
    expect(held('s2')!.patterns).toEqual({ pan_field: '[A-Z]{5}[0-9]{4}[A-Z]' });
  });

  it('evicts a hibernated session exactly SESSION_IDLE_TTL_SECONDS after its last touch, and a wake re-arms from the new touch', async () => {
    const h = createHarness({ env: { SESSION_HIBERNATE_SECONDS: '60', SESSION_IDLE_TTL_SECONDS: '600' } });
    await post(h, { session_id: 's1', event: 'identity' });
    advance(h.clock, 300 * SECOND);
    expect(counts(h)).toEqual({ running: 0, hibernated: 1 });
    await post(h, { session_id: 's1', event: 'identity' });
    advance(h.clock, 600 * SECOND - 1);
    expect(counts(h)).toEqual({ running: 0, hibernated: 1 });
    advance(h.clock, 1);
    await settle();
    expect(h.system.sessionHost.has('s1')).toBe(false);
    expect((await h.http.get('/api/sessions/s1')).status).toBe(404);
  });

  it('keeps a session running while voice is active or a reengagement timer is armed, and hibernates it once they are over', async () => {
    const h = createHarness({ env: { SESSION_HIBERNATE_SECONDS: '60', REENGAGEMENT_INACTIVITY_SECONDS: '300' } });
    expect(
      (await h.http.post('/v1/assistant/session/start').send({ session_id: 's1', screen: 'pan_details' })).status,
    ).toBe(200);
    // The agent fetches its context each minute of the call, which keeps it from ending as silent.
    for (let minute = 0; minute < 10; minute += 1) {
      advance(h.clock, 60 * SECOND);
      expect((await h.http.get('/v1/assistant/context/s1')).status).toBe(200);
    }
    expect(counts(h)).toEqual({ running: 1, hibernated: 0 });
    expect((await h.http.post('/v1/assistant/session/stop').send({ session_id: 's1' })).body.active).toBe(false);

    advance(h.clock, 300 * SECOND - 1);
    expect(counts(h)).toEqual({ running: 1, hibernated: 0 });
    advance(h.clock, 1);
    const reengagements = (await h.http.get('/api/activity?kind=reengagement')).body.items as {
      payload: { source: string };
    }[];
    expect(reengagements.map((item) => item.payload.source)).toEqual(['session_stop', 'timer']);

    advance(h.clock, 60 * SECOND);
    expect(counts(h)).toEqual({ running: 0, hibernated: 1 });
    expect(((await h.http.get('/api/sessions/s1')).body as { voice: { stopped_at: string } }).voice.stopped_at).toBe(
      '2026-11-20T12:10:00.000Z',
    );
  });

  it('at MAX_SESSIONS evicts a hibernated session before a running one', async () => {
    const h = createHarness({ env: { SESSION_HIBERNATE_SECONDS: '60', MAX_SESSIONS: '2' } });
    await post(h, { session_id: 'a', event: 'identity' });
    advance(h.clock, 61 * SECOND);
    await post(h, { session_id: 'b', event: 'identity' });
    expect(counts(h)).toEqual({ running: 1, hibernated: 1 });
    expect((await post(h, { session_id: 'c', event: 'identity' })).status).toBe(200);
    expect(['a', 'b', 'c'].filter((id) => h.system.sessionHost.has(id))).toEqual(['b', 'c']);
  });

  it('sweeps at most once a second, so sessions going idle one after another hibernate in batches', async () => {
    const h = createHarness({ env: { SESSION_HIBERNATE_SECONDS: '60' } });
    for (let n = 0; n < 10; n += 1) {
      await post(h, { session_id: `s${n}`, event: 'identity' });
      h.clock.increment(100);
    }
    // s0 is due at 60.0 s, s9 at 60.9 s; one sweep at 60.0 s, the next no sooner than 61.0 s.
    advance(h.clock, 59_000, 100);
    expect(counts(h)).toEqual({ running: 9, hibernated: 1 });
    advance(h.clock, 900, 100);
    expect(counts(h)).toEqual({ running: 9, hibernated: 1 });
    advance(h.clock, 100, 100);
    expect(counts(h)).toEqual({ running: 0, hibernated: 10 });
  });

  it('never hibernates with SESSION_HIBERNATE_SECONDS=0', async () => {
    const h = createHarness({ env: { SESSION_HIBERNATE_SECONDS: '0' } });
    await post(h, { session_id: 's1', event: 'identity' });
    advance(h.clock, 3_600 * SECOND, 60 * SECOND);
    expect(counts(h)).toEqual({ running: 1, hibernated: 0 });
  });
});
