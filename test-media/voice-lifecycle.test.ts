import { dispose } from '@livekit/rtc-node';
import { RoomServiceClient } from 'livekit-server-sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AgentWorker } from './support/agent-worker.js';
import { startAgentWorker } from './support/agent-worker.js';
import { eventually } from './support/eventually.js';
import type { LiveKitServer } from './support/livekit-server.js';
import { startLiveKitServer } from './support/livekit-server.js';
import type { MediaService } from './support/media-service.js';
import { startMediaService } from './support/media-service.js';
import type { ModelStandIn } from './support/model-stand-in.js';
import { startModelStandIn } from './support/model-stand-in.js';
import type { SimulatedUser } from './support/simulated-user.js';
import { joinAsUser } from './support/simulated-user.js';

/** Short timers: the agent fetches every 3 s, and a call not heard from for 8 s ends. */
const SILENCE_SECONDS = 8;

let liveKit: LiveKitServer;
let service: MediaService;
let models: ModelStandIn;
let worker: AgentWorker;
let rooms: RoomServiceClient;
const users: SimulatedUser[] = [];

/** ParticipantInfo.Kind.AGENT of LiveKit's protocol (the server SDK does not re-export the enum). */
const AGENT_KIND = 4;
const agentsIn = async (room: string) => (await rooms.listParticipants(room)).filter((participant) => Number(participant.kind) === AGENT_KIND);
const roomExists = async (room: string) => (await rooms.listRooms([room])).length > 0;
const roomSid = async (room: string) => (await rooms.listRooms([room]))[0]?.sid;

beforeAll(async () => {
  liveKit = await startLiveKitServer({ logFile: process.env.MEDIA_TEST_LIVEKIT_LOG });
  service = await startMediaService(liveKit, {
    VOICE_CONTEXT_REFRESH_SECONDS: '3',
    VOICE_CONTEXT_REFRESH_MIN_INTERVAL_SECONDS: '1',
    VOICE_SILENCE_TIMEOUT_SECONDS: String(SILENCE_SECONDS),
  });
  models = await startModelStandIn({ reply: () => 'Please check the highlighted field.', transcript: () => 'hello' });
  worker = await startAgentWorker(liveKit, service, models.baseUrl);
  rooms = new RoomServiceClient(liveKit.url, liveKit.apiKey, liveKit.apiSecret);
});

afterEach(async () => {
  for (const user of users.splice(0)) await user.leave().catch(() => {});
});

afterAll(async () => {
  await worker?.stop();
  await models?.close();
  await service?.stop();
  await liveKit?.stop();
  await dispose();
});

describe('a voice session from start to end on a real LiveKit server', () => {
  it('stop deletes the room and the agent job ends', async () => {
    const sessionId = 'life-stop-1';
    const started = await service.startVoice(sessionId);
    const user = await joinAsUser(started.media_url, started.token);
    users.push(user);
    await eventually(() => agentsIn(started.media_room), (agents) => agents.length === 1, 30_000);
    const sid = await roomSid(started.media_room);

    const stopped = await service.stopVoice(sessionId);
    expect(stopped.active).toBe(false);
    // The room the service created is gone at once. An agent still joining when it went makes a
    // new one of that name by joining (the server's auto-create); it sees that and leaves, and
    // the server closes the empty room after its departure timeout.
    await eventually(() => roomSid(started.media_room), (now) => now !== sid, 15_000);
    await eventually(() => worker.output(), (output) => output.split('\n').some((line) => line.includes('"job ended"') && line.includes(sessionId)), 30_000);
    await eventually(() => roomExists(started.media_room), (exists) => !exists, 45_000);
  });

  it('an agent killed mid-call: the silence check ends the session, and the next start dispatches one fresh agent', async () => {
    const sessionId = 'life-kill-1';
    const started = await service.startVoice(sessionId);
    const user = await joinAsUser(started.media_url, started.token);
    users.push(user);
    await eventually(() => agentsIn(started.media_room), (agents) => agents.length === 1, 30_000);
    // The agent is talking to the service: its fetches keep the call alive.
    await eventually(() => service.activity(sessionId, 'voice_agent_context_fetch'), (items) => items.length >= 2, 30_000);
    expect((await service.session(sessionId)).active).toBe(true);

    await worker.kill();
    // Nobody fetches the context any more: the silence check ends the call and deletes its room.
    await eventually(() => service.session(sessionId), (session) => !session.active, (SILENCE_SECONDS + 20) * 1000);
    await eventually(() => roomExists(started.media_room), (exists) => !exists, 15_000);
    // Activity comes oldest first.
    const lastFetch = (await service.activity(sessionId, 'voice_agent_context_fetch')).at(-1);
    const stop = (await service.activity(sessionId, 'session_stop')).at(-1);
    expect(Date.parse(stop!.timestamp) - Date.parse(lastFetch!.timestamp)).toBeGreaterThanOrEqual(SILENCE_SECONDS * 1000 - 500);

    worker = await startAgentWorker(liveKit, service, models.baseUrl);
    const again = await service.startVoice(sessionId);
    expect(again.media_room).toBe(started.media_room);
    await eventually(() => agentsIn(again.media_room), (agents) => agents.length === 1, 30_000);
    // Still one a while later: no second dispatch, no restarted job of the killed worker.
    await new Promise((resolve) => setTimeout(resolve, 4000));
    expect(await agentsIn(again.media_room)).toHaveLength(1);
    await service.stopVoice(sessionId);
  });
});
