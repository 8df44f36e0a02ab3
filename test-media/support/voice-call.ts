import type { RoomServiceClient } from 'livekit-server-sdk';
import { eventually } from './eventually.js';
import type { MediaService } from './media-service.js';
import type { SimulatedUser } from './simulated-user.js';
import { joinAsUser } from './simulated-user.js';

/** ParticipantInfo.Kind.AGENT of LiveKit's protocol (the server SDK does not re-export the enum). */
const AGENT_KIND = 4;

/** The agent participants of a room, as the server lists them. */
export async function agentsIn(rooms: RoomServiceClient, room: string) {
  return (await rooms.listParticipants(room)).filter((participant) => Number(participant.kind) === AGENT_KIND);
}

/**
 * A voice call as the app makes one: the session is started and the user joins its room with the
 * token the service issued. The user is added to `users`, which the test file leaves after each test.
 */
export async function startCall(service: MediaService, sessionId: string, users: SimulatedUser[], screen?: string) {
  const started = await service.startVoice(sessionId, screen);
  const user = await joinAsUser(started.media_url, started.token);
  users.push(user);
  return { started, user };
}

/** The agent has joined and said its opening line (that it is an automated assistant). */
export async function heardOpening(user: SimulatedUser, timeoutMs = 30_000) {
  // The opening is the tenant's consent notice in the worker's language (docs/explanation/calls.md): English or Hindi here.
  await eventually(
    () => user.transcripts.join(' '),
    (text) => /automated assistant|स्वचालित सहायक/i.test(text),
    timeoutMs,
  );
}

/** What a stand-in receives from now on: `next()` waits for the first such request and returns it. */
export function requestsFrom<T>(received: T[]) {
  const from = received.length;
  return {
    async next(timeoutMs = 30_000): Promise<T> {
      await eventually(
        () => received.length,
        (count) => count > from,
        timeoutMs,
      );
      return received[from]!;
    },
    since: () => received.slice(from),
  };
}
