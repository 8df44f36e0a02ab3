import { dispose } from '@livekit/rtc-node';
import { AgentDispatchClient } from 'livekit-server-sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually.js';
import type { MediaStack } from './support/media-stack.js';
import { startMediaStack } from './support/media-stack.js';
import type { SimulatedUser } from './support/simulated-user.js';
import { agentsIn as agentsInRoom, startCall } from './support/voice-call.js';

/** Short timers: the agent fetches every 3 s, and a call not heard from for 8 s ends. */
const SILENCE_SECONDS = 8;

let stack: MediaStack;
const users: SimulatedUser[] = [];

const agentsIn = (room: string) => agentsInRoom(stack.rooms, room);
const roomExists = async (room: string) => (await stack.rooms.listRooms([room])).length > 0;
const roomSid = async (room: string) => (await stack.rooms.listRooms([room]))[0]?.sid;

beforeAll(async () => {
  stack = await startMediaStack({
    service: {
      VOICE_CONTEXT_REFRESH_SECONDS: '3',
      VOICE_CONTEXT_REFRESH_MIN_INTERVAL_SECONDS: '1',
      VOICE_SILENCE_TIMEOUT_SECONDS: String(SILENCE_SECONDS),
    },
    models: { reply: () => 'Please check the highlighted field.', transcript: () => 'hello' },
  });
});

afterEach(async () => {
  for (const user of users.splice(0)) await user.leave().catch(() => {});
});

afterAll(async () => {
  await stack?.stop();
  await dispose();
});

describe('a voice session from start to end on a real LiveKit server', () => {
  it('stop deletes the room and the agent job ends', async () => {
    const sessionId = 'life-stop-1';
    const { service } = stack;
    const { started } = await startCall(service, sessionId, users);
    await eventually(
      () => agentsIn(started.media_room),
      (agents) => agents.length === 1,
      30_000,
    );
    const sid = await roomSid(started.media_room);

    const stopped = await service.stopVoice(sessionId);
    expect(stopped.active).toBe(false);
    // The room the service created is gone at once, and stays gone: an agent still joining when
    // it went finds no room (this server, as a deployment should be, does not create rooms on
    // join), logs why and ends its job.
    await eventually(
      () => roomSid(started.media_room),
      (now) => now !== sid,
      15_000,
    );
    // At once when the conversation had started; when the room went while it was still starting,
    // the job leaves at once but the framework's own close of that session waits out its
    // 60 s timeout before the job ends (docs/reference/voice-agent.md, "Faults").
    await eventually(
      () => stack.worker.output(),
      (output) => output.split('\n').some((line) => line.includes('"job ended"') && line.includes(sessionId)),
      75_000,
    );
    expect(await roomExists(started.media_room)).toBe(false);
  }, 120_000);

  it('an agent killed mid-call: the silence check ends the session, and the next start dispatches one fresh agent', async () => {
    const sessionId = 'life-kill-1';
    const { service } = stack;
    const { started } = await startCall(service, sessionId, users);
    const [killed] = await eventually(
      () => agentsIn(started.media_room),
      (agents) => agents.length === 1,
      30_000,
    );
    // The agent is talking to the service: its fetches keep the call alive.
    await eventually(
      () => service.activity(sessionId, 'voice_agent_context_fetch'),
      (items) => items.length >= 2,
      30_000,
    );
    expect((await service.session(sessionId)).active).toBe(true);

    await stack.worker.kill();
    // Nobody fetches the context any more: the silence check ends the call and deletes its room.
    await eventually(
      () => service.session(sessionId),
      (session) => !session.active,
      (SILENCE_SECONDS + 20) * 1000,
    );
    await eventually(
      () => roomExists(started.media_room),
      (exists) => !exists,
      15_000,
    );
    // Activity comes oldest first.
    const lastFetch = (await service.activity(sessionId, 'voice_agent_context_fetch')).at(-1);
    const stop = (await service.activity(sessionId, 'session_stop')).at(-1);
    // Ended by the silence timeout after the agent was last heard from: not sooner, and not much
    // later either, so the session never says voice is active with nobody in the room for longer.
    const silent = Date.parse(stop!.timestamp) - Date.parse(lastFetch!.timestamp);
    expect(silent).toBeGreaterThanOrEqual(SILENCE_SECONDS * 1000 - 500);
    expect(silent).toBeLessThan(SILENCE_SECONDS * 1000 + 3000);

    await stack.replaceWorker();
    const again = await service.startVoice(sessionId);
    expect(again.media_room).toBe(started.media_room);
    await eventually(
      () => agentsIn(again.media_room),
      (agents) => agents.length === 1,
      30_000,
    );
    // Still one a while later: no second dispatch, no restarted job of the killed worker.
    await new Promise((resolve) => setTimeout(resolve, 4000));
    const [fresh, ...others] = await agentsIn(again.media_room);
    expect(others).toHaveLength(0);
    expect(fresh!.identity).not.toBe(killed!.identity);
    // The killed call's room and its dispatch went with the silence check: the room has one
    // dispatch of the voice agent (its job is the one agent above; the listing's job state is not
    // always filled in by the time it is read, so the agents in the room are what is counted).
    // The server also lists its own automatic dispatch of every room (empty agent name, for
    // workers registered without one), which is why the room shows two dispatches in all.
    const listed = await new AgentDispatchClient(
      stack.liveKit.url,
      stack.liveKit.apiKey,
      stack.liveKit.apiSecret,
    ).listDispatch(again.media_room);
    const ours = listed.filter((dispatch) => dispatch.agentName === service.agentName);
    expect(ours).toHaveLength(1);
    expect(
      listed.filter((dispatch) => dispatch.agentName !== service.agentName).map((dispatch) => dispatch.agentName),
    ).toEqual(['']);
    await service.stopVoice(sessionId);
  });
});
