import { AgentDispatchClient, RoomServiceClient } from 'livekit-server-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replacedDispatch } from '../../agent/replaced-dispatch.js';
import { STAND_IN_KEY, STAND_IN_SECRET, startLiveKitStandIn } from '../support/livekit-stand-in.js';

/**
 * A job asks whether its dispatch is still the room's (agent/replaced-dispatch.ts), over the wire
 * the real server speaks; test-media/voice-agent-join.test.ts restarts a real one mid-call.
 */
let lk: Awaited<ReturnType<typeof startLiveKitStandIn>>;
const room = 'kyc-replaced-1';
const agentName = 'kyc-voice-agent';
const logged: string[] = [];
const check = (dispatchId: string) =>
  replacedDispatch({
    liveKit: { url: lk.url, apiKey: STAND_IN_KEY, apiSecret: STAND_IN_SECRET },
    room,
    dispatchId,
    log: (message) => logged.push(message),
  });

beforeAll(async () => {
  lk = await startLiveKitStandIn();
  await new RoomServiceClient(lk.url, STAND_IN_KEY, STAND_IN_SECRET).createRoom({ name: room });
});
afterAll(() => lk.close());

describe("a job's dispatch, replaced or not", () => {
  it('is not replaced while the room holds it, and is once the service deleted it for a new one', async () => {
    const dispatches = new AgentDispatchClient(lk.url, STAND_IN_KEY, STAND_IN_SECRET);
    const first = await dispatches.createDispatch(room, agentName, { metadata: '{"session_id":"s1"}' });
    expect(await check(first.id)()).toBe(false);

    await dispatches.deleteDispatch(first.id, room);
    const second = await dispatches.createDispatch(room, agentName, { metadata: '{"session_id":"s1"}' });
    expect(await check(first.id)()).toBe(true);
    expect(await check(second.id)()).toBe(false);
  });

  it('a list the media server does not answer keeps the agent, and says so', async () => {
    lk.failNext('ListDispatch', { status: 503, code: 'unavailable', msg: 'down for a moment' });
    expect(await check('AD_gone')()).toBe(false);
    expect(logged).toContain('could not list the room dispatches: staying');
  });

  it('a job given no dispatch id asks nothing and stays', async () => {
    const before = lk.methodsCalled().length;
    expect(await check('')()).toBe(false);
    expect(lk.methodsCalled()).toHaveLength(before);
  });
});
