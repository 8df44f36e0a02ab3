import { Room, dispose } from '@livekit/rtc-node';
import { RoomServiceClient } from 'livekit-server-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LiveKitServer } from './support/livekit-server.js';
import { startLiveKitServer } from './support/livekit-server.js';
import type { MediaService } from './support/media-service.js';
import { startMediaService } from './support/media-service.js';

/** The token with its room grant changed, and its signature kept. */
function withRoom(token: string, room: string): string {
  const [header, payload, signature] = token.split('.');
  const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as { video: { room: string } };
  claims.video.room = room;
  return [header, Buffer.from(JSON.stringify(claims)).toString('base64url'), signature].join('.');
}

let liveKit: LiveKitServer;
let service: MediaService;

beforeAll(async () => {
  liveKit = await startLiveKitServer();
  service = await startMediaService(liveKit);
});

afterAll(async () => {
  await service?.stop();
  await liveKit?.stop();
  await dispose();
});

describe('the service on a real LiveKit server', () => {
  it('creates the room it names, and its token joins that room and no other', async () => {
    const started = await service.startVoice('room-token-1');
    expect(started.media_room).toBe('kyc-room-room-token-1');
    expect(started.media_url).toBe(liveKit.wsUrl);

    const rooms = new RoomServiceClient(liveKit.url, liveKit.apiKey, liveKit.apiSecret);
    expect((await rooms.listRooms([started.media_room])).map((room) => room.name)).toEqual([started.media_room]);

    const user = new Room();
    await user.connect(started.media_url, started.token);
    try {
      expect(user.name).toBe(started.media_room);
      const participants = await rooms.listParticipants(started.media_room);
      expect(participants.map((participant) => participant.identity)).toContain(user.localParticipant!.identity);
    } finally {
      await user.disconnect();
    }

    // The room is the token's grant: pointing it at another session's room breaks its signature.
    const other = await service.startVoice('room-token-2');
    const intruder = new Room();
    await expect(intruder.connect(started.media_url, withRoom(started.token, other.media_room))).rejects.toThrow();
    expect(await rooms.listParticipants(other.media_room)).toEqual([]);
  });
});
