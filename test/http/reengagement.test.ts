import { describe, expect, it } from 'vitest';
import type { Harness } from '../support/harness.js';
import { START_TIME, createHarness } from '../support/harness.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const event = (name = 'component_input') => ({ session_id: 's1', event: name, screen: 'pan_details' });
const startVoice = (h: Harness) =>
  h.http.post('/v1/assistant/session/start').send({ session_id: 's1', user_id: 'u1', screen: 'pan_details' });
const stopVoice = (h: Harness) => h.http.post('/v1/assistant/session/stop').send({ session_id: 's1' });
const reengagement = async (h: Harness) => (await h.http.get('/api/reengagement/s1')).body as Record<string, unknown>;
const reengagements = async (h: Harness) =>
  (await h.http.get('/api/activity?kind=reengagement')).body.items as {
    timestamp: string;
    user_id: string | null;
    payload: Record<string, unknown>;
  }[];

describe('GET /api/reengagement/{session_id}', () => {
  it('404 for an unknown session, 422 for an impossible id', async () => {
    const h = createHarness();
    expect((await h.http.get('/api/reengagement/nobody')).body).toEqual({ detail: 'session nobody not found' });
    const bad = await h.http.get('/api/reengagement/a%20b');
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toMatch(/^session_id:/);
  });

  it('does not recommend for a session that never had voice, however long the user is away', async () => {
    const h = createHarness();
    await h.http.post('/v1/events').send(event());
    h.clock.increment(HOUR);
    expect(await reengagement(h)).toEqual({
      session_id: 's1',
      recommended: false,
      channel: 'voice',
      reason: 'user_active',
      inactivity_seconds: 3600,
    });
  });

  it('answers assistant_active while voice runs, and recommends once the user has been inactive long enough after a stop', async () => {
    const h = createHarness();
    await h.http.post('/v1/events').send(event());
    await startVoice(h);
    // The agent fetching its context is what keeps a call from ending as silent.
    for (let minute = 0; minute < 10; minute += 1) {
      h.clock.increment(MINUTE);
      expect((await h.http.get('/v1/assistant/context/s1')).status).toBe(200);
    }
    expect(await reengagement(h)).toMatchObject({
      recommended: false,
      reason: 'assistant_active',
      inactivity_seconds: 600,
    });
    await stopVoice(h);
    expect(await reengagement(h)).toMatchObject({
      recommended: true,
      reason: 'user_inactive_10min',
      inactivity_seconds: 600,
    });
  });

  it('reads inactivity from the injected clock and REENGAGEMENT_INACTIVITY_SECONDS; agent telemetry does not count as the user', async () => {
    const h = createHarness({ env: { REENGAGEMENT_INACTIVITY_SECONDS: '120' } });
    await h.http.post('/v1/events').send(event());
    await startVoice(h);
    await stopVoice(h);
    h.clock.increment(119_000);
    await h.http.post('/v1/events').send(event('voice_conversation_turn'));
    expect(await reengagement(h)).toMatchObject({ recommended: false, inactivity_seconds: 119 });
    h.clock.increment(1_000);
    expect(await reengagement(h)).toMatchObject({
      recommended: true,
      reason: 'user_inactive_2min',
      inactivity_seconds: 120,
    });
  });
});

describe('the reengagement timer (simulated clock)', () => {
  it('armed at stop: records one more reengagement when the user stays inactive, and only one', async () => {
    const h = createHarness({ env: { REENGAGEMENT_INACTIVITY_SECONDS: '7200' } });
    await h.http.post('/v1/events').send(event());
    await startVoice(h);
    await stopVoice(h);
    expect((await reengagements(h)).map((item) => item.payload.source)).toEqual(['session_stop']);
    h.clock.increment(2 * HOUR - 1);
    expect(await reengagements(h)).toHaveLength(1);
    h.clock.increment(1);
    const [, fired] = await reengagements(h);
    expect(fired).toMatchObject({
      timestamp: new Date(START_TIME + 2 * HOUR).toISOString(),
      user_id: 'u1',
      payload: {
        recommended: true,
        channel: 'voice',
        reason: 'user_inactive_120min',
        inactivity_seconds: 7200,
        source: 'timer',
      },
    });
    h.clock.increment(10 * HOUR);
    expect(await reengagements(h)).toHaveLength(2);
  });

  it('is re-armed by user activity, not by agent telemetry', async () => {
    const h = createHarness();
    await startVoice(h);
    await stopVoice(h);
    h.clock.increment(4 * MINUTE);
    await h.http.post('/v1/events').send(event());
    h.clock.increment(4 * MINUTE);
    await h.http.post('/v1/events').send(event('voice_conversation_turn'));
    expect(await reengagements(h)).toHaveLength(1);
    h.clock.increment(MINUTE);
    const fired = (await reengagements(h))[1];
    expect(fired!.timestamp).toBe(new Date(START_TIME + 9 * MINUTE).toISOString());
    expect(fired!.payload).toMatchObject({ reason: 'user_inactive_5min', inactivity_seconds: 300, source: 'timer' });
  });

  it('is cancelled by a new start', async () => {
    const h = createHarness();
    await startVoice(h);
    await stopVoice(h);
    h.clock.increment(MINUTE);
    await startVoice(h);
    h.clock.increment(4 * MINUTE);
    expect((await reengagements(h)).map((item) => item.payload.source)).toEqual(['session_stop']);
    await stopVoice(h);
    h.clock.increment(5 * MINUTE);
    expect((await reengagements(h)).map((item) => item.payload.source)).toEqual([
      'session_stop',
      'session_stop',
      'timer',
    ]);
  });

  it('is not armed by a stop on an inactive session', async () => {
    const h = createHarness();
    await h.http.post('/v1/events').send(event());
    await stopVoice(h);
    h.clock.increment(HOUR);
    expect(await reengagements(h)).toEqual([]);
  });
});
