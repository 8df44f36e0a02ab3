import { describe, expect, it } from 'vitest';
import { enqueueActions } from 'xstate';
import { ingestSdkEvent } from '../../src/use-cases/ingest-sdk-event.js';
import { redactForIngest } from '../../src/domain/event-redaction.js';
import { EventInSchema } from '../../src/domain/sdk-event.js';
import { sessionMachine } from '../../src/machines/session/machine.js';
import { advance, createHarness, settle } from '../support/harness.js';

const HOUR = 3_600_000;
const event = (sessionId: string, name = 'identity') => ({ session_id: sessionId, event: name });

describe('idle eviction', () => {
  it('evicts a session untouched for SESSION_IDLE_TTL_SECONDS, on the simulated clock', async () => {
    const h = createHarness();
    await h.http.post('/v1/events').send(event('s1'));
    h.clock.increment(24 * HOUR - 1);
    expect(h.system.sessionHost.has('s1')).toBe(true);
    h.clock.increment(1);
    await settle();
    expect(h.system.sessionHost.has('s1')).toBe(false);
    expect((await h.http.get('/api/sessions/s1')).status).toBe(404);
  });

  it('counts the idle time from the last event', async () => {
    const h = createHarness({ env: { SESSION_IDLE_TTL_SECONDS: '60' } });
    await h.http.post('/v1/events').send(event('s1'));
    advance(h.clock, 50_000);
    await h.http.post('/v1/events').send(event('s1'));
    advance(h.clock, 59_000);
    expect(h.system.sessionHost.has('s1')).toBe(true);
    advance(h.clock, 1_000);
    await settle();
    expect(h.system.sessionHost.has('s1')).toBe(false);
  });

  it('a session evicted and then written to starts afresh', async () => {
    const h = createHarness({ env: { SESSION_IDLE_TTL_SECONDS: '60' } });
    await h.http.post('/v1/events').send({ session_id: 's1', event: 'screen_state', screen: 'pan_details' });
    h.clock.increment(60_000);
    await settle();
    await h.http.post('/v1/events').send(event('s1'));
    expect((await h.http.get('/api/sessions/s1')).body.screen).toBeNull();
  });
});

describe('MAX_SESSIONS', () => {
  it('evicts the least recently used inactive session to make room', async () => {
    const h = createHarness({ env: { MAX_SESSIONS: '3' } });
    for (const id of ['a', 'b', 'c']) await h.http.post('/v1/events').send(event(id));
    await h.http.post('/v1/events').send(event('a'));
    const res = await h.http.post('/v1/events').send(event('d'));
    expect(res.status).toBe(200);
    await settle();
    expect(h.system.sessionHost.size).toBe(3);
    expect(['a', 'b', 'c', 'd'].filter((id) => h.system.sessionHost.has(id))).toEqual(['a', 'c', 'd']);
  });
});

describe('MAX_SESSIONS with active voice sessions', () => {
  it('answers 503 {detail} when every live session is in a voice session, and evicts none of them', async () => {
    const h = createHarness({ env: { MAX_SESSIONS: '2' } });
    for (const id of ['a', 'b']) {
      expect(
        (await h.http.post('/v1/assistant/session/start').send({ session_id: id, screen: 'pan_details' })).status,
      ).toBe(200);
    }
    const res = await h.http.post('/v1/events').send(event('c'));
    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      detail: 'session capacity reached and no inactive session can be evicted; retry later',
    });
    expect(res.headers['retry-after']).toBe('5');
    await settle();
    expect(['a', 'b', 'c'].map((id) => h.system.sessionHost.has(id))).toEqual([true, true, false]);

    await h.http.post('/v1/assistant/session/stop').send({ session_id: 'a' });
    expect((await h.http.post('/v1/events').send(event('c'))).status).toBe(200);
    await settle();
    expect(['a', 'b', 'c'].map((id) => h.system.sessionHost.has(id))).toEqual([false, true, true]);
  });
});

describe('failure isolation', () => {
  // A session machine whose ingest throws for one event name: a stand-in for any bug in a session.
  const fragile = sessionMachine.provide({
    actions: {
      ingest: enqueueActions(({ event, enqueue }) => {
        if (event.type === 'session.ingest' && event.event.event === 'explode') throw new Error('boom');
        // The original action object, re-typed: provide() widens its actor parameter.
        enqueue(sessionMachine.implementations.actions.ingest as unknown as Parameters<typeof enqueue>[0]);
      }),
    },
  });

  it('a failing session answers 500 without a stack, and no other session or the process notices', async () => {
    const h = createHarness({ sessionLogic: fragile });
    await h.http.post('/v1/events').send({ session_id: 'good', event: 'screen_state', screen: 'pan_details' });
    await h.http.post('/v1/events').send(event('bad'));

    const res = await h.http.post('/v1/events').send(event('bad', 'explode'));
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ detail: 'internal server error' });
    expect(JSON.stringify(res.body)).not.toContain('boom');

    expect(h.system.sessionHost.has('bad')).toBe(false);
    expect((await h.http.get('/api/sessions/good')).body.screen).toBe('pan_details');
    expect((await h.http.post('/v1/events').send(event('good'))).status).toBe(200);
    expect((await h.http.post('/v1/events').send(event('bad'))).status).toBe(200);
    const logged = h.logs.parsed().find((line) => line.msg === 'session actor failed; session discarded');
    expect(logged).toMatchObject({ session_id: 'bad' });
  });
});

describe('commands asked in one turn (delivered together, command-batch.ts)', () => {
  const ask = (h: ReturnType<typeof createHarness>, raw: Record<string, unknown>) =>
    ingestSdkEvent(h.system.sessionHost, raw.session_id as string, redactForIngest(EventInSchema.parse(raw)), {
      trace_id: 't',
      request_id: 'r',
    });

  it('reach each session in the order asked, every answer after its own session holds it', async () => {
    const h = createHarness();
    const screens = ['intro', 'pan_details', 'selfie'];
    const asked = screens.flatMap((screen) =>
      ['s1', 's2'].map((sessionId) => ask(h, { session_id: sessionId, event: 'screen_state', screen })),
    );
    // Nothing is delivered while this turn's callback runs.
    expect(h.system.sessionHost.has('s1')).toBe(false);
    const answers = await Promise.all(asked);
    expect(answers.every((answer) => answer.ok)).toBe(true);
    for (const sessionId of ['s1', 's2'])
      expect((await h.http.get(`/api/sessions/${sessionId}`)).body.screen).toBe('selfie');
    const items = (await h.http.get('/api/activity?limit=100')).body.items as {
      session_id: string;
      payload: { screen: string };
    }[];
    expect(items.filter((item) => item.session_id === 's1').map((item) => item.payload.screen)).toEqual([
      'intro',
      'pan_details',
      'selfie',
    ]);
  });

  it('one failing session in a batch fails alone; the others of the same turn are applied', async () => {
    const fragile = sessionMachine.provide({
      actions: {
        ingest: enqueueActions(({ event, enqueue }) => {
          if (event.type === 'session.ingest' && event.event.event === 'explode') throw new Error('boom');
          enqueue(sessionMachine.implementations.actions.ingest as unknown as Parameters<typeof enqueue>[0]);
        }),
      },
    });
    const h = createHarness({ sessionLogic: fragile });
    const answers = await Promise.all([
      ask(h, { session_id: 'before', event: 'screen_state', screen: 'intro' }),
      ask(h, { session_id: 'bad', event: 'explode' }),
      ask(h, { session_id: 'after', event: 'screen_state', screen: 'selfie' }),
    ]);
    expect(answers.map((answer) => (answer.ok ? 'ok' : answer.reason))).toEqual(['ok', 'failed', 'ok']);
    expect((await h.http.get('/api/sessions/after')).body.screen).toBe('selfie');
  });

  it('a command asked just before shutdown is still delivered', async () => {
    const h = createHarness();
    const asked = ask(h, { session_id: 'last', event: 'screen_state', screen: 'intro' });
    h.system.sessionHost.stopAll();
    expect((await asked).ok).toBe(true);
    expect(h.store.sessions.load('last')?.context.screen).toBe('intro');
  });
});
