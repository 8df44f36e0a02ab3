import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Harness } from '../support/harness.js';
import { advance, createHarness, restartAfterCrash, settle } from '../support/harness.js';
import type { LiveKitStandIn } from '../support/livekit-stand-in.js';
import { startLiveKitStandIn } from '../support/livekit-stand-in.js';

let lk: LiveKitStandIn;
beforeAll(async () => void (lk = await startLiveKitStandIn()));
beforeEach(() => lk.reset());
afterAll(() => lk.close());

const ROOM = 'kyc-room-s1';
const harness = () => createHarness({ env: { STORE: 'sqlite', ...lk.env() } });
const start = (h: Harness) => h.http.post('/v1/assistant/session/start').send({ session_id: 's1', user_id: 'u1', screen: 'pan_details' });
const stop = (h: Harness) => h.http.post('/v1/assistant/session/stop').send({ session_id: 's1' });
const agentsIn = (room: string) => lk.dispatches.filter((dispatch) => dispatch.room === room).length;
const starts = async (h: Harness) => ((await h.http.get('/api/activity?kind=session_start')).body.items as { payload: { resumed: boolean } }[]).map((item) => item.payload.resumed);
/** Sends a start whose answer the crash will swallow (supertest sends only once someone waits on it). */
const startUnanswered = (h: Harness) => void start(h).then(
  () => undefined,
  () => undefined,
);

describe('voice sessions across a restart (LiveKit stand-in)', () => {
  it('an active voice session stays active: a start resumes it with the same agent, a stop stops it', async () => {
    const h = harness();
    expect((await start(h)).status).toBe(200);
    const after = restartAfterCrash(h);
    expect((await after.http.get('/api/sessions/s1')).body).toMatchObject({ active: true, voice: { room: ROOM } });
    expect((await start(after)).status).toBe(200);
    expect(await starts(after)).toEqual([false, true]);
    expect(agentsIn(ROOM)).toBe(1);
    const third = restartAfterCrash(after);
    expect((await stop(third)).body).toMatchObject({ active: false });
    const stops = (await third.http.get('/api/activity?kind=session_stop')).body.items as { payload: { was_active: boolean } }[];
    expect(stops.map((item) => item.payload.was_active)).toEqual([true]);
    expect(lk.rooms.has(ROOM)).toBe(false);
  });

  it("a call's silence check keeps its deadline across a restart: nothing heard of it, it ends at the timeout after the start", async () => {
    const h = createHarness({ env: { STORE: 'sqlite', VOICE_SILENCE_TIMEOUT_SECONDS: '300', ...lk.env() } });
    expect((await start(h)).status).toBe(200);
    const startedAt = h.clock.now();
    advance(h.clock, 200_000, 60_000);
    const after = restartAfterCrash(h);
    advance(after.clock, 100_000 - 1, 60_000);
    await settle();
    expect((await after.http.get('/api/sessions/s1')).body).toMatchObject({ active: true });
    advance(after.clock, 1);
    // The wake at the deadline restores the session, whose check has nothing left to wait: armed
    // inside the clock's jump, it fires on the simulated clock's next flush (a real one, at once).
    after.clock.increment(0);
    // The stop's room deletion goes to the stand-in: wait for the session to settle, not for time.
    await vi.waitFor(async () => expect((await after.http.get('/api/sessions/s1')).body).toMatchObject({ active: false }));
    const stops = (await after.http.get('/api/activity?kind=session_stop')).body.items as { timestamp: string; payload: Record<string, unknown> }[];
    expect(stops).toMatchObject([{ timestamp: new Date(startedAt + 300_000).toISOString(), payload: { was_active: true, ended_by: 'silence', silent_seconds: 300 } }]);
    expect(lk.rooms.has(ROOM)).toBe(false);
  });

  it('a start in flight at the crash, its agent already dispatched: the retry adopts that agent and never dispatches a second', async () => {
    const h = harness();
    const held = lk.holdNext('CreateDispatch');
    startUnanswered(h);
    await held.arrived;
    expect(agentsIn(ROOM)).toBe(1);

    const after = restartAfterCrash(h);
    // Never answered, so not started: the session comes back inactive, its room remembered.
    expect((await after.http.get('/api/sessions/s1')).body).toMatchObject({ active: false, voice: { room: ROOM } });
    const retried = await start(after);
    expect(retried.status).toBe(200);
    expect(lk.methodsCalled().filter((method) => method === 'CreateDispatch')).toHaveLength(1);
    expect(agentsIn(ROOM)).toBe(1);
    expect((await after.http.get('/api/sessions/s1')).body).toMatchObject({ active: true, voice: { dispatch_id: lk.dispatches[0]!.id } });
    held.release();
  });

  it('a start in flight at the crash before any dispatch: the retry dispatches exactly one agent', async () => {
    const h = harness();
    const held = lk.holdNext('CreateRoom');
    startUnanswered(h);
    await held.arrived;
    const after = restartAfterCrash(h);
    expect((await start(after)).status).toBe(200);
    expect(agentsIn(ROOM)).toBe(1);
    held.release();
  });
});
