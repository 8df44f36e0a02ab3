import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Harness } from '../support/harness.js';
import { START_TIME, advance, createHarness, restartAfterCrash, settle } from '../support/harness.js';
import type { LiveKitStandIn } from '../support/livekit-stand-in.js';
import { startLiveKitStandIn } from '../support/livekit-stand-in.js';

/**
 * Every call gets an agent or says why (docs/decisions/0032-an-agent-joins-or-the-call-ends.md):
 * the session's agent watch on the simulated clock, against the LiveKit stand-in, whose worker
 * can be down (dispatches wait, as a real server's do) and whose rooms can vanish (a restart).
 */
let lk: LiveKitStandIn;
beforeAll(async () => {
  lk = await startLiveKitStandIn();
});
afterAll(() => lk.close());
beforeEach(() => lk.reset());

const ROOM = 'kyc-room-s1';
const SECOND = 1000;
const harness = (env: Record<string, string> = {}) => createHarness({ env: { ...lk.env(), ...env } });
const start = (h: Harness) =>
  h.http.post('/v1/assistant/session/start').send({ session_id: 's1', screen: 'pan_details' });
const session = async (h: Harness) =>
  (await h.http.get('/api/sessions/s1')).body as {
    active: boolean;
    voice: { dispatch_id: string | null; stopped_at: string | null };
  };
const items = async (h: Harness) =>
  (
    (await h.http.get('/api/activity?limit=1000')).body.items as {
      kind: string;
      timestamp: string;
      payload: Record<string, unknown>;
    }[]
  ).filter((item) => ['session_start', 'session_stop', 'voice_agent'].includes(item.kind));
const at = (ms: number) => new Date(START_TIME + ms).toISOString();
/** A join is no activity item (the typical order stays as it is): the session's watch holds it. */
const joinedAt = (h: Harness) => h.system.sessionHost.snapshot('s1')?.context.agent_watch?.joined_at ?? null;

/** Moves the clock and lets the media calls the timers started finish (their replies are real HTTP). */
async function pass(h: Harness, ms: number): Promise<void> {
  for (let moved = 0; moved < ms; moved += SECOND) {
    advance(h.clock, Math.min(SECOND, ms - moved));
    for (let turn = 0; turn < 40; turn += 1) await settle();
    await new Promise((resolve) => setTimeout(resolve, 5));
    for (let turn = 0; turn < 40; turn += 1) await settle();
  }
}

/** Waits (event-loop turns and the stand-in's replies, not simulated time) for `check`. */
async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let turn = 0; turn < 200 && !(await check()); turn += 1) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(await check()).toBe(true);
}

describe('no agent joins', () => {
  it('dispatches again after VOICE_AGENT_JOIN_SECONDS, once more per attempt, the old dispatch deleted, then ends the call with ended_by no_agent', async () => {
    const h = harness();
    lk.setWorker(false);
    expect((await start(h)).body.warnings).toEqual([]);
    const first = (await session(h)).voice.dispatch_id;
    expect(lk.dispatches.map((d) => d.id)).toEqual([first]);
    expect(JSON.parse(lk.dispatches[0]!.metadata)).not.toHaveProperty('takeover');

    await pass(h, 10 * SECOND);
    await until(() => lk.dispatches.length === 1 && lk.dispatches[0]!.id !== first);
    const second = (await session(h)).voice.dispatch_id;
    expect(second).toBe(lk.dispatches[0]!.id);
    // The replacing dispatch tells its agent the user has been waiting: it opens with a sorry.
    expect(JSON.parse(lk.dispatches[0]!.metadata)).toMatchObject({ takeover: true });
    expect(lk.methodsCalled().slice(3)).toEqual(['ListRooms', 'ListParticipants', 'DeleteDispatch', 'CreateDispatch']);

    // The second dispatch has twice the time to join, the third three times.
    await pass(h, 19 * SECOND);
    expect((await items(h)).filter((item) => item.kind === 'voice_agent')).toHaveLength(1);
    await pass(h, SECOND);
    await until(async () => (await items(h)).filter((item) => item.kind === 'voice_agent').length === 2);
    await pass(h, 29 * SECOND);
    expect((await session(h)).active).toBe(true);
    await pass(h, SECOND);
    await until(async () => !(await session(h)).active);

    expect(await items(h)).toEqual([
      expect.objectContaining({
        kind: 'session_start',
        payload: expect.objectContaining({ resumed: false, warnings: [], dispatch_id: first }),
      }),
      expect.objectContaining({
        kind: 'voice_agent',
        timestamp: at(10 * SECOND),
        payload: expect.objectContaining({ outcome: 'redispatched', attempt: 2, replaced: first, dispatch_id: second }),
      }),
      expect.objectContaining({
        kind: 'voice_agent',
        timestamp: at(30 * SECOND),
        payload: expect.objectContaining({ outcome: 'redispatched', attempt: 3, replaced: second }),
      }),
      expect.objectContaining({
        kind: 'session_stop',
        timestamp: at(60 * SECOND),
        payload: expect.objectContaining({ was_active: true, ended_by: 'no_agent' }),
      }),
    ]);
    expect(lk.rooms.has(ROOM)).toBe(false);
    expect((await session(h)).voice.stopped_at).toBe(at(60 * SECOND));
    // A dispatch per attempt, each the only one in the room while it stood.
    expect(lk.methodsCalled().filter((method) => method === 'CreateDispatch')).toHaveLength(3);
    expect(lk.methodsCalled().filter((method) => method === 'DeleteDispatch')).toHaveLength(2);
    // The call record says why it ended (docs/explanation/calls.md).
    const calls = (await h.http.get('/api/sessions/s1/calls')).body.calls as {
      ended_by: string;
      report: { summary: string };
    }[];
    expect(calls).toEqual([expect.objectContaining({ ended_by: 'no_agent' })]);
    expect(calls[0]!.report.summary).toContain('No agent joined the call.');
  });

  it('VOICE_AGENT_DISPATCH_ATTEMPTS bounds the dispatches; VOICE_AGENT_JOIN_SECONDS sets the wait', async () => {
    const h = harness({ VOICE_AGENT_JOIN_SECONDS: '4', VOICE_AGENT_DISPATCH_ATTEMPTS: '1' });
    lk.setWorker(false);
    await start(h);
    await pass(h, 3 * SECOND);
    expect((await session(h)).active).toBe(true);
    await pass(h, SECOND);
    await until(async () => !(await session(h)).active);
    const stop = (await items(h)).at(-1)!;
    expect(stop).toMatchObject({ kind: 'session_stop', timestamp: at(4 * SECOND), payload: { ended_by: 'no_agent' } });
    expect(lk.methodsCalled().filter((method) => method === 'CreateDispatch')).toHaveLength(1);
  });

  it('a worker that comes up later is given the next dispatch, and the call carries on with its agent', async () => {
    const h = harness();
    lk.setWorker(false);
    await start(h);
    lk.setWorker(true);
    await pass(h, 10 * SECOND);
    await until(() => (lk.participants.get(ROOM) ?? []).length === 1);
    // The second dispatch's room check comes twice the time to join after it.
    await pass(h, 20 * SECOND);
    await until(() => joinedAt(h) !== null);
    expect(joinedAt(h)).toBe(START_TIME + 30 * SECOND);
    expect(h.system.sessionHost.snapshot('s1')?.context.agent_watch).toMatchObject({ attempts: 2 });
    expect((await items(h)).filter((item) => item.kind === 'voice_agent').map((item) => item.payload.outcome)).toEqual([
      'redispatched',
    ]);
    await pass(h, 60 * SECOND);
    expect((await session(h)).active).toBe(true);
    expect(lk.methodsCalled().filter((method) => method === 'CreateDispatch')).toHaveLength(2);
  });
});

describe('the agent joins', () => {
  it('its first context fetch is its join: no room check needed, and the dispatch-to-join time goes to /metrics', async () => {
    const h = harness();
    await start(h);
    await pass(h, 2 * SECOND);
    expect((await h.http.get('/v1/assistant/context/s1')).status).toBe(200);
    await until(() => joinedAt(h) !== null);
    expect(joinedAt(h)).toBe(START_TIME + 2 * SECOND);
    expect((await items(h)).filter((item) => item.kind === 'voice_agent')).toEqual([]);
    await pass(h, 10 * SECOND);
    expect(lk.methodsCalled()).toEqual(['CreateRoom', 'ListDispatch', 'CreateDispatch']);
    const metrics = (await h.http.get('/metrics')).text;
    expect(metrics).toMatch(/kyc_voice_agent_join_seconds_bucket\{le="2"\} 1/);
    expect(metrics).toMatch(/kyc_voice_agent_join_seconds_bucket\{le="1"\} 0/);
  });

  it('a start within the time to join keeps the dispatch: resumed, the same dispatch_id, no warning', async () => {
    const h = harness();
    lk.setWorker(false);
    const first = await start(h);
    await pass(h, 5 * SECOND);
    const again = await start(h);
    expect(again.body.warnings).toEqual([]);
    expect(lk.dispatches).toHaveLength(1);
    expect(
      (await items(h))
        .filter((item) => item.kind === 'session_start')
        .map((item) => [item.payload.resumed, item.payload.dispatch_id]),
    ).toEqual([
      [false, lk.dispatches[0]!.id],
      [true, lk.dispatches[0]!.id],
    ]);
    expect(first.body.media_room).toBe(again.body.media_room);
  });
});

describe('late jobs of replaced dispatches', () => {
  const voiceAgentItems = async (h: Harness) =>
    (await items(h)).filter((item) => item.kind === 'voice_agent').map((item) => item.payload);

  it('a context fetch naming a replaced dispatch is served but is not the join; one naming the current dispatch is', async () => {
    const h = harness();
    lk.setWorker(false);
    await start(h);
    const first = (await session(h)).voice.dispatch_id!;
    await pass(h, 10 * SECOND);
    await until(async () => (await session(h)).voice.dispatch_id !== first);
    const second = (await session(h)).voice.dispatch_id!;

    const late = await h.http.get(`/v1/assistant/context/s1?dispatch_id=${first}`);
    expect(late.status).toBe(200);
    expect(late.body.session_id).toBe('s1');
    expect(joinedAt(h)).toBeNull();

    await pass(h, 3 * SECOND);
    expect((await h.http.get(`/v1/assistant/context/s1?dispatch_id=${second}`)).status).toBe(200);
    await until(() => joinedAt(h) !== null);
    expect(joinedAt(h)).toBe(START_TIME + 13 * SECOND);
    // Timed from the dispatch it came by, not from the start.
    expect((await h.http.get('/metrics')).text).toMatch(/kyc_voice_agent_join_seconds_bucket\{le="5"\} 1/);
  });

  it('a dispatch_id that is not one is refused with a detail naming it, and the session is left as it was', async () => {
    const h = harness();
    lk.setWorker(false);
    await start(h);
    const before = h.system.sessionHost.snapshot('s1')?.context.agent_watch;
    const refused = await h.http.get('/v1/assistant/context/s1?dispatch_id=' + encodeURIComponent('AD_1; drop'));
    expect(refused.status).toBe(422);
    expect(JSON.stringify(refused.body.detail)).toContain('dispatch_id');
    const twice = await h.http.get('/v1/assistant/context/s1?dispatch_id=a&dispatch_id=b');
    expect(twice.status).toBe(422);
    expect(h.system.sessionHost.snapshot('s1')?.context.agent_watch).toEqual(before);
    expect((await items(h)).filter((item) => item.kind === 'voice_agent_context_fetch')).toEqual([]);
  });

  it('agents that leave before their first room check count on against the attempts: the call ends with no_agent, not a dispatch loop', async () => {
    const h = harness();
    lk.setWorker(false);
    await start(h);
    await pass(h, 10 * SECOND);
    await until(async () => (await voiceAgentItems(h)).length === 1);
    // A job of the replaced dispatch arrives late: the room check finds it, then it leaves, as a
    // job that learns its dispatch was replaced does (agent/job.ts).
    lk.agentJoins(ROOM);
    await pass(h, 20 * SECOND);
    await until(() => joinedAt(h) !== null);
    lk.agentsLeave(ROOM);
    await pass(h, 30 * SECOND);
    await until(async () => (await voiceAgentItems(h)).length === 3);
    lk.agentJoins(ROOM);
    await pass(h, 30 * SECOND);
    await until(() => joinedAt(h) !== null);
    lk.agentsLeave(ROOM);
    await pass(h, 30 * SECOND);
    await until(async () => !(await session(h)).active);

    expect((await voiceAgentItems(h)).map((payload) => [payload.outcome, payload.attempt])).toEqual([
      ['redispatched', 2],
      ['agent_left', undefined],
      ['redispatched', 3],
      ['agent_left', undefined],
    ]);
    expect((await items(h)).at(-1)).toMatchObject({
      kind: 'session_stop',
      timestamp: at(120 * SECOND),
      payload: { ended_by: 'no_agent' },
    });
    expect(lk.methodsCalled().filter((method) => method === 'CreateDispatch')).toHaveLength(3);
  });

  it('an agent that stayed past its first room check and then left gets a fresh round of dispatches', async () => {
    const h = harness();
    await start(h);
    await h.http.get('/v1/assistant/context/s1');
    await pass(h, 30 * SECOND);
    lk.agentsLeave(ROOM);
    lk.setWorker(false);
    await pass(h, 30 * SECOND);
    await until(async () => (await voiceAgentItems(h)).length === 2);
    expect((await voiceAgentItems(h)).map((payload) => [payload.outcome, payload.attempt])).toEqual([
      ['agent_left', undefined],
      ['redispatched', 1],
    ]);
    expect(h.system.sessionHost.snapshot('s1')?.context.agent_watch).toMatchObject({
      attempts: 1,
      due_at: START_TIME + 70 * SECOND,
    });
  });
});

describe('a resume of a call whose agent is missing', () => {
  it('never joined and its time is up: the resume dispatches anew and says so (agent_redispatched)', async () => {
    const h = harness();
    lk.setWorker(false);
    await start(h);
    const stale = (await session(h)).voice.dispatch_id;
    // The resume arrives as the time to join runs out, before the watch's own check.
    h.clock.set(START_TIME + 10 * SECOND);
    lk.setWorker(true);
    const again = await start(h);
    expect(again.body.warnings).toEqual(['agent_redispatched']);
    const fresh = (await session(h)).voice.dispatch_id;
    expect(fresh).not.toBe(stale);
    expect(lk.dispatches.map((d) => d.id)).toEqual([fresh]);
    const resumed = (await items(h)).filter((item) => item.kind === 'session_start').at(-1)!;
    expect(resumed.payload).toMatchObject({ resumed: true, dispatch_id: fresh, warnings: ['agent_redispatched'] });
    // The second dispatch has twice the time to join: its room check comes then.
    await pass(h, 20 * SECOND);
    await until(() => joinedAt(h) !== null);
  });

  it('joined and left: the resume finds the room without it and dispatches anew', async () => {
    const h = harness();
    await start(h);
    await h.http.get('/v1/assistant/context/s1');
    lk.agentsLeave(ROOM);
    const again = await start(h);
    expect(again.body.warnings).toEqual(['agent_redispatched']);
    expect(lk.methodsCalled().slice(-4)).toEqual(['ListRooms', 'ListParticipants', 'DeleteDispatch', 'CreateDispatch']);
  });

  it('with its agent there: resumed with the same dispatch, as before', async () => {
    const h = harness();
    await start(h);
    await h.http.get('/v1/assistant/context/s1');
    const dispatch = (await session(h)).voice.dispatch_id;
    const again = await start(h);
    expect(again.body.warnings).toEqual([]);
    expect((await session(h)).voice.dispatch_id).toBe(dispatch);
    expect(lk.dispatches).toHaveLength(1);
  });
});

describe('the media server loses the room', () => {
  it('a restart that forgot the room ends the call with media_lost at the next room check; a start again makes room and agent anew', async () => {
    const h = harness();
    await start(h);
    await h.http.get('/v1/assistant/context/s1');
    lk.forgetRooms();
    await pass(h, 30 * SECOND);
    await until(async () => !(await session(h)).active);
    expect((await items(h)).at(-1)).toMatchObject({
      kind: 'session_stop',
      timestamp: at(30 * SECOND),
      payload: { was_active: true, ended_by: 'media_lost' },
    });

    lk.calls.length = 0;
    const again = await start(h);
    expect(again.body.warnings).toEqual([]);
    expect((await items(h)).filter((item) => item.kind === 'session_start').at(-1)!.payload).toMatchObject({
      resumed: false,
    });
    expect(lk.methodsCalled()).toEqual(['CreateRoom', 'ListDispatch', 'CreateDispatch']);
    expect(lk.rooms.has(ROOM)).toBe(true);
  });

  it('a room gone before its agent joined ends the call with media_lost too, not after every dispatch', async () => {
    const h = harness();
    lk.setWorker(false);
    await start(h);
    lk.forgetRooms();
    await pass(h, 10 * SECOND);
    await until(async () => !(await session(h)).active);
    expect((await items(h)).at(-1)).toMatchObject({
      kind: 'session_stop',
      timestamp: at(10 * SECOND),
      payload: { ended_by: 'media_lost' },
    });
  });

  it('a media server that answers no room check three times in a row ends the call with media_lost', async () => {
    const h = harness({ MEDIA_REQUEST_TIMEOUT_SECONDS: '1' });
    await start(h);
    await h.http.get('/v1/assistant/context/s1');
    const down = { status: 503, code: 'unavailable', msg: 'down' };
    for (let i = 0; i < 3; i += 1) lk.failNext('ListRooms', down);
    await pass(h, 60 * SECOND);
    expect((await session(h)).active).toBe(true);
    await pass(h, 30 * SECOND);
    await until(async () => !(await session(h)).active);
    expect((await items(h)).at(-1)).toMatchObject({
      kind: 'session_stop',
      timestamp: at(90 * SECOND),
      payload: { ended_by: 'media_lost' },
    });
  });

  it('one unanswered check is no reason to end: the next answered one carries on', async () => {
    const h = harness();
    await start(h);
    await h.http.get('/v1/assistant/context/s1');
    lk.failNext('ListRooms', { status: 503, code: 'unavailable', msg: 'down' });
    await pass(h, 90 * SECOND);
    expect((await session(h)).active).toBe(true);
    expect(h.system.sessionHost.snapshot('s1')?.context.agent_watch).toMatchObject({ unanswered: 0 });
  });
});

describe('across a restart of the service', () => {
  it('a call still waiting for its agent keeps its deadline: the watch checks at the time to join after the start', async () => {
    const h = harness({ STORE: 'sqlite' });
    lk.setWorker(false);
    await start(h);
    await pass(h, 4 * SECOND);
    const after = restartAfterCrash(h);
    const before = lk.calls.length;
    await pass(after, 5 * SECOND);
    expect(lk.calls.length).toBe(before);
    await pass(after, SECOND);
    // The wake at the deadline restores the session, whose check has nothing left to wait.
    after.clock.increment(0);
    await until(() => lk.methodsCalled().filter((m) => m === 'CreateDispatch').length === 2);
    expect((await items(after)).find((item) => item.kind === 'voice_agent')).toMatchObject({
      timestamp: at(10 * SECOND),
      payload: { outcome: 'redispatched', attempt: 2 },
    });
  });
});
