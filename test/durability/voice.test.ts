import { readFileSync } from 'node:fs';
import { TokenVerifier } from 'livekit-server-sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Harness } from '../support/harness.js';
import { advance, createHarness, restartAfterCrash, settle } from '../support/harness.js';
import type { LiveKitStandIn } from '../support/livekit-stand-in.js';
import { STAND_IN_KEY, STAND_IN_SECRET, startLiveKitStandIn } from '../support/livekit-stand-in.js';

let lk: LiveKitStandIn;
beforeAll(async () => void (lk = await startLiveKitStandIn()));
beforeEach(() => lk.reset());
afterAll(() => lk.close());

const ROOM = 'kyc-room-s1';
const harness = () => createHarness({ env: { STORE: 'sqlite', ...lk.env() } });
const start = (h: Harness) =>
  h.http.post('/v1/assistant/session/start').send({ session_id: 's1', user_id: 'u1', screen: 'pan_details' });
const stop = (h: Harness) => h.http.post('/v1/assistant/session/stop').send({ session_id: 's1' });
const agentsIn = (room: string) => lk.dispatches.filter((dispatch) => dispatch.room === room).length;
const starts = async (h: Harness) =>
  ((await h.http.get('/api/activity?kind=session_start')).body.items as { payload: { resumed: boolean } }[]).map(
    (item) => item.payload.resumed,
  );
/** Sends a start whose answer the crash will swallow (supertest sends only once someone waits on it). */
const startUnanswered = (h: Harness) =>
  void start(h).then(
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
    const stops = (await third.http.get('/api/activity?kind=session_stop')).body.items as {
      payload: { was_active: boolean };
    }[];
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
    await vi.waitFor(async () =>
      expect((await after.http.get('/api/sessions/s1')).body).toMatchObject({ active: false }),
    );
    const stops = (await after.http.get('/api/activity?kind=session_stop')).body.items as {
      timestamp: string;
      payload: Record<string, unknown>;
    }[];
    expect(stops).toMatchObject([
      {
        timestamp: new Date(startedAt + 300_000).toISOString(),
        payload: { was_active: true, ended_by: 'silence', silent_seconds: 300 },
      },
    ]);
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
    expect((await after.http.get('/api/sessions/s1')).body).toMatchObject({
      active: true,
      voice: { dispatch_id: lk.dispatches[0]!.id },
    });
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

  it('a named start keeps no token in the file or its WAL, and its copy after a restart gets a working token minted anew, changing nothing', async () => {
    const h = harness();
    const named = (on: Harness) => start(on).set('Idempotency-Key', 'start-with-token-1');
    const first = await named(h).expect(200);
    const token = first.body.token as string;
    expect(token.split('.')).toHaveLength(3);
    // The reply is kept (the copy below finds it), but without its credential.
    const kept = h.system.calls!.db.prepare('SELECT reply FROM kept_replies').all() as { reply: string }[];
    expect(kept).toHaveLength(1);
    expect(kept[0]!.reply).not.toContain('token"');
    const signature = token.split('.')[2]!;
    const file = h.store.sessions.health().file!;
    for (const path of [file, `${file}-wal`]) {
      const bytes = readFileSync(path);
      expect(bytes.includes(signature), `${path} holds the token`).toBe(false);
    }

    const after = restartAfterCrash(h);
    const copy = await named(after).expect(200);
    expect(copy.body).toMatchObject({
      session_id: 's1',
      media_room: ROOM,
      livekit_room: ROOM,
      media_url: first.body.media_url,
      expires_in_sec: first.body.expires_in_sec,
      warnings: first.body.warnings,
      assistant_invocation_id: first.body.assistant_invocation_id,
    });
    expect(Object.keys(copy.body).sort()).toEqual(Object.keys(first.body).sort());
    const grants = await new TokenVerifier(STAND_IN_KEY, STAND_IN_SECRET).verify(copy.body.token as string);
    expect(grants).toMatchObject({ sub: 'u1', video: { roomJoin: true, room: ROOM } });
    // A copy is answered, not run: no second start, no second agent.
    expect(await starts(after)).toEqual([false]);
    expect(agentsIn(ROOM)).toBe(1);
  });
});
