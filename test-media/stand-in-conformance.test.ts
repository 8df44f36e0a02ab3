import type { VideoGrant } from 'livekit-server-sdk';
import { SignJWT } from 'jose';
import { AccessToken, ServerError } from 'livekit-server-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLiveKitMedia } from '../src/integrations/livekit-media.js';
import type { AgentNotice } from '../src/domain/agent-notice.js';
import type { MediaProvider } from '../src/integrations/media-port.js';
import type { LiveKitStandIn } from '../test/support/livekit-stand-in.js';
import { STAND_IN_KEY, STAND_IN_SECRET, startLiveKitStandIn } from '../test/support/livekit-stand-in.js';
import { startLiveKitServer } from './support/livekit-server.js';

/**
 * `npm test` talks to test/support/livekit-stand-in.ts in place of LiveKit. Here the same calls go
 * to the stand-in and to a real LiveKit server, and their answers must agree on what the service
 * can see: the status, the Twirp error code and message, and every field it reads. A difference
 * is a stand-in that lets `npm test` pass against a server that does not exist.
 */

interface Target {
  name: string;
  /** http:// base of the Twirp API. */
  url: string;
  key: string;
  secret: string;
}

/** What a client can tell of one answer. */
interface Answer {
  status: number;
  contentType: string | null;
  body: unknown;
}

type Json = Record<string, unknown>;

let real: Awaited<ReturnType<typeof startLiveKitServer>>;
let standIn: LiveKitStandIn;
let targets: Target[];
const run = `conf-${process.pid}-${Date.now().toString(36)}`;
let serial = 0;
/** A room name no earlier case used, the same on both servers. */
const freshRoom = () => `${run}-${(serial += 1)}-room`;

async function adminToken(
  target: Target,
  grant: VideoGrant,
  key = target.key,
  secret = target.secret,
): Promise<string> {
  const token = new AccessToken(key, secret, { ttl: 600 });
  token.addGrant(grant);
  return token.toJwt();
}

/** One Twirp call as the SDK makes it (JSON, a bearer token), answered as it came. */
async function twirp(target: Target, path: string, body: unknown, authorization: string | undefined): Promise<Answer> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (authorization !== undefined) headers.Authorization = authorization;
  const response = await fetch(`${target.url}/twirp/livekit.${path}`, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const contentType = response.headers.get('content-type');
  return {
    status: response.status,
    contentType,
    body: contentType === 'application/json' ? (JSON.parse(text) as unknown) : text,
  };
}

const bearer = async (target: Target, grant: VideoGrant) => `Bearer ${await adminToken(target, grant)}`;

/** The fields of a room the service or its operators read; the rest (codecs, TURN password) is the server's. */
const roomFields = (room: Json) => ({
  name: room.name,
  metadata: room.metadata,
  max_participants: room.max_participants,
  sid: String(room.sid).slice(0, 3),
});
/** A dispatch as the service reads it (its id, to keep, and the agent's name, to find ours), and what the agent reads. */
const dispatchFields = (dispatch: Json) => ({
  id: String(dispatch.id).slice(0, 3),
  agent_name: dispatch.agent_name,
  room: dispatch.room,
  metadata: dispatch.metadata,
});
const byName = (a: { agent_name?: unknown; name?: unknown }, b: { agent_name?: unknown; name?: unknown }) =>
  String(a.agent_name ?? a.name).localeCompare(String(b.agent_name ?? b.name));

/** An answer with the parts that legitimately differ (ids, times) reduced to their shape. */
function comparable(answer: Answer): Answer {
  const body = answer.body as Json;
  if (answer.status !== 200 || typeof body !== 'object') return answer;
  if (Array.isArray(body.rooms))
    return { ...answer, body: { rooms: (body.rooms as Json[]).map(roomFields).sort(byName) } };
  if (Array.isArray(body.agent_dispatches))
    return {
      ...answer,
      body: { agent_dispatches: (body.agent_dispatches as Json[]).map(dispatchFields).sort(byName) },
    };
  if ('sid' in body) return { ...answer, body: roomFields(body) };
  if ('agent_name' in body) return { ...answer, body: dispatchFields(body) };
  return answer;
}

/**
 * Runs `steps` on each server in turn, each with a room of its own, and expects the same answers.
 * The answers name the rooms, so each server's room name is read back as one placeholder.
 */
async function sameOnBoth(steps: (target: Target, room: string) => Promise<Answer[]>): Promise<Answer[]> {
  const each: Answer[][] = [];
  for (const target of targets) {
    const room = freshRoom();
    const answers = (await steps(target, room)).map(comparable);
    each.push(JSON.parse(JSON.stringify(answers).replaceAll(room, '<room>')) as Answer[]);
  }
  const [fromReal, fromStandIn] = each;
  expect(fromStandIn).toEqual(fromReal);
  return fromReal!;
}

beforeAll(async () => {
  // The server as it comes (rooms created on join), which is what the stand-in answers as.
  [real, standIn] = await Promise.all([startLiveKitServer({ autoCreateRooms: true }), startLiveKitStandIn()]);
  targets = [
    { name: 'real', url: real.url, key: real.apiKey, secret: real.apiSecret },
    { name: 'stand-in', url: standIn.url.replace(/^ws/, 'http'), key: STAND_IN_KEY, secret: STAND_IN_SECRET },
  ];
}, 120_000);

afterAll(async () => {
  await standIn?.close();
  await real?.stop();
});

describe('the LiveKit stand-in answers as the real server does', () => {
  it('rooms: create (twice: the second changes nothing), list with and without a filter, delete, delete again', async () => {
    const answers = await sameOnBoth(async (t, room) => {
      const create = await bearer(t, { roomCreate: true });
      const list = await bearer(t, { roomList: true });
      return [
        await twirp(
          t,
          'RoomService/CreateRoom',
          { name: room, metadata: '{"session_id":"s1"}', maxParticipants: 2 },
          create,
        ),
        await twirp(
          t,
          'RoomService/CreateRoom',
          { name: room, metadata: '{"session_id":"other"}', maxParticipants: 5 },
          create,
        ),
        await twirp(t, 'RoomService/ListRooms', { names: [room] }, list),
        await twirp(t, 'RoomService/ListRooms', { names: [`${room}-none`] }, list),
        await twirp(t, 'RoomService/DeleteRoom', { room }, create),
        await twirp(t, 'RoomService/DeleteRoom', { room }, create),
        await twirp(t, 'RoomService/ListRooms', { names: [room] }, list),
      ];
    });
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 404, 200]);
  });

  it('lists every room without a filter, ours among them', async () => {
    await sameOnBoth(async (t, room) => {
      await twirp(t, 'RoomService/CreateRoom', { name: room }, await bearer(t, { roomCreate: true }));
      const all = await twirp(t, 'RoomService/ListRooms', {}, await bearer(t, { roomList: true }));
      const rooms = (all.body as { rooms: Json[] }).rooms.filter((r) => r.name === room);
      return [{ ...all, body: { rooms } }];
    });
  });

  it('dispatches: each create adds one, and the list holds them beside the dispatch the server made with the room', async () => {
    const answers = await sameOnBoth(async (t, room) => {
      const admin = await bearer(t, { roomAdmin: true, room });
      return [
        await twirp(
          t,
          'RoomService/CreateRoom',
          { name: room, metadata: '{"session_id":"s1"}' },
          await bearer(t, { roomCreate: true }),
        ),
        await twirp(
          t,
          'AgentDispatchService/CreateDispatch',
          { room, agentName: 'kyc-voice-agent', metadata: '{"session_id":"s1"}' },
          admin,
        ),
        await twirp(t, 'AgentDispatchService/ListDispatch', { room }, admin),
        await twirp(t, 'AgentDispatchService/ListDispatch', { room, dispatchId: 'AD_none' }, admin),
        await twirp(t, 'RoomService/DeleteRoom', { room }, await bearer(t, { roomCreate: true })),
      ];
    });
    expect((answers[2]!.body as { agent_dispatches: Json[] }).agent_dispatches.map((d) => d.agent_name)).toEqual([
      '',
      'kyc-voice-agent',
    ]);
  });

  it('a dispatch to a room that does not exist creates it', async () => {
    await sameOnBoth(async (t, room) => {
      const admin = await bearer(t, { roomAdmin: true, room });
      return [
        await twirp(t, 'AgentDispatchService/CreateDispatch', { room, agentName: 'kyc-voice-agent' }, admin),
        await twirp(t, 'RoomService/ListRooms', { names: [room] }, await bearer(t, { roomList: true })),
        await twirp(t, 'AgentDispatchService/ListDispatch', { room }, admin),
        await twirp(t, 'RoomService/DeleteRoom', { room }, await bearer(t, { roomCreate: true })),
      ];
    });
  });

  it('data to a room, and to a room that does not exist', async () => {
    const answers = await sameOnBoth(async (t, room) => {
      const data = Buffer.from('{"type":"context_updated"}').toString('base64');
      await twirp(t, 'RoomService/CreateRoom', { name: room }, await bearer(t, { roomCreate: true }));
      const missing = `${room}-gone`;
      return [
        await twirp(
          t,
          'RoomService/SendData',
          { room, data, kind: 'RELIABLE', topic: 'context_updated' },
          await bearer(t, { roomAdmin: true, room }),
        ),
        await twirp(
          t,
          'RoomService/SendData',
          { room: missing, data, topic: 'context_updated' },
          await bearer(t, { roomAdmin: true, room: missing }),
        ),
        await twirp(t, 'RoomService/DeleteRoom', { room }, await bearer(t, { roomCreate: true })),
      ];
    });
    expect(answers[1]).toMatchObject({ status: 503, body: { code: 'unavailable' } });
  });

  it('a participant removed who is not in the room, in a room that exists', async () => {
    await sameOnBoth(async (t, room) => {
      await twirp(t, 'RoomService/CreateRoom', { name: room }, await bearer(t, { roomCreate: true }));
      const answers = [
        await twirp(
          t,
          'RoomService/RemoveParticipant',
          { room, identity: 'agent-AJ_gone' },
          await bearer(t, { roomAdmin: true, room }),
        ),
      ];
      await twirp(t, 'RoomService/DeleteRoom', { room }, await bearer(t, { roomCreate: true }));
      return answers;
    });
  });

  it('the dispatches of a room that does not exist, or no longer does', async () => {
    await sameOnBoth(async (t, room) => {
      const admin = await bearer(t, { roomAdmin: true, room });
      await twirp(t, 'RoomService/CreateRoom', { name: room }, await bearer(t, { roomCreate: true }));
      await twirp(t, 'RoomService/DeleteRoom', { room }, await bearer(t, { roomCreate: true }));
      return [await twirp(t, 'AgentDispatchService/ListDispatch', { room }, admin)];
    });
  });

  it('tokens without the grant each call needs', async () => {
    const answers = await sameOnBoth(async (t, room) => [
      await twirp(t, 'RoomService/CreateRoom', { name: room }, await bearer(t, { roomList: true })),
      await twirp(t, 'RoomService/ListRooms', {}, await bearer(t, { roomCreate: true })),
      await twirp(t, 'RoomService/DeleteRoom', { room }, await bearer(t, { roomAdmin: true, room })),
      await twirp(
        t,
        'AgentDispatchService/CreateDispatch',
        { room, agentName: 'kyc-voice-agent' },
        await bearer(t, { roomAdmin: true, room: `${room}-other` }),
      ),
      await twirp(t, 'AgentDispatchService/ListDispatch', { room }, await bearer(t, { roomCreate: true })),
      await twirp(t, 'RoomService/SendData', { room, data: 'e30=' }, await bearer(t, { roomCreate: true })),
      await twirp(t, 'RoomService/ListRooms', {}, undefined),
      await twirp(t, 'RoomService/ListRooms', { names: [room] }, await bearer(t, { roomList: true })),
    ]);
    expect(answers.slice(0, 7).every((a) => a.status === 401 && (a.body as Json).code === 'unauthenticated')).toBe(
      true,
    );
    // Refused calls did nothing: no room was made.
    expect(answers[7]!.body).toEqual({ rooms: [] });
  });

  it('bad tokens: another secret, an unknown key, expired an hour ago, not a JWT, not a bearer token', async () => {
    const answers = await sameOnBoth(async (t) => {
      // The server quotes a refused token; each server's keys differ, so its token is read back as one placeholder.
      const list = async (authorization: string) => {
        const answer = await twirp(t, 'RoomService/ListRooms', {}, authorization);
        return { ...answer, body: String(answer.body).replace(authorization.replace(/^Bearer /, ''), '<token>') };
      };
      const now = Math.floor(Date.now() / 1000);
      const expired = await new SignJWT({ video: { roomList: true } })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer(t.key)
        .setNotBefore(now - 7200)
        .setExpirationTime(now - 3600)
        .sign(new TextEncoder().encode(t.secret));
      return [
        await list(`Bearer ${expired}`),
        await list(`Bearer ${await adminToken(t, { roomList: true }, t.key, `${t.secret}-wrong`)}`),
        await list(`Bearer ${await adminToken(t, { roomList: true }, 'no-such-key', t.secret)}`),
        await list('Bearer not.a-jwt'),
        await list(`Basic ${Buffer.from(`${t.key}:${t.secret}`).toString('base64')}`),
      ];
    });
    expect(answers.every((a) => a.status === 401 && a.contentType?.startsWith('text/plain'))).toBe(true);
  });

  it('routes and bodies: an unknown method, a GET, protobuf, a body that is not JSON', async () => {
    await sameOnBoth(async (t) => {
      const list = await bearer(t, { roomList: true });
      const raw = async (init: RequestInit) => {
        const response = await fetch(`${t.url}/twirp/livekit.RoomService/ListRooms`, {
          ...init,
          headers: { Authorization: list, ...init.headers },
        });
        return {
          status: response.status,
          contentType: response.headers.get('content-type'),
          body: await response.json(),
        };
      };
      return [
        await twirp(t, 'RoomService/NoSuchMethod', {}, list),
        await raw({ method: 'GET' }),
        await raw({ method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: '{}' }),
        await raw({ method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"names":' }),
      ];
    });
  });
});

describe("the service's LiveKit adapter reads both servers alike", () => {
  /** The adapter's outcome: what it resolved to, or what it was refused with. */
  const outcome = async (call: () => Promise<unknown>) => {
    try {
      const value = await call();
      return { resolved: typeof value === 'string' ? value.slice(0, 3) : (value ?? null) };
    } catch (error) {
      if (!(error instanceof ServerError)) throw error;
      return { status: error.status, code: error.code, message: error.message };
    }
  };

  it('start, find, notify, stop, stop again; and the calls for a room that is gone', async () => {
    const results = [];
    for (const target of targets) {
      const media: MediaProvider = createLiveKitMedia({
        url: target.url,
        apiKey: target.key,
        apiSecret: target.secret,
        agentName: 'kyc-voice-agent',
        tokenTtlSeconds: 600,
        requestTimeoutSeconds: 10,
      });
      const room = freshRoom();
      const dispatchId = { value: null as string | null };
      const notice: AgentNotice = { type: 'context_updated', session_id: 's1', reason: 'validation_failed', at: 0 };
      results.push([
        await outcome(() => media.createRoom(room, 's1')),
        // The server's own dispatch (empty agent name) is not the voice agent's.
        await outcome(() => media.findAgentDispatch(room, null)),
        await outcome(async () => (dispatchId.value = await media.dispatchAgent(room, 's1'))),
        await outcome(async () => (await media.findAgentDispatch(room, null)) === dispatchId.value),
        await outcome(() => media.notifyAgent(room, notice)),
        await outcome(() => media.deleteRoom(room)),
        await outcome(() => media.deleteRoom(room)),
        await outcome(() => media.notifyAgent(room, notice)),
        await outcome(() => media.findAgentDispatch(room, null)),
      ]);
    }
    expect(results[1]).toEqual(results[0]);
    expect(results[0]).toEqual([
      { resolved: null },
      { resolved: null },
      { resolved: 'AD_' },
      { resolved: true },
      { resolved: null },
      { resolved: null },
      { resolved: null },
      { status: 503, code: 'unavailable', message: 'twirp error unknown: no response from servers' },
      { status: 503, code: 'unavailable', message: 'twirp error unknown: no response from servers' },
    ]);
  }, 60_000);

  it("the agent watch's calls: a room's agent presence, a dispatch replaced (and one already gone), presence once the room is gone", async () => {
    // No worker on either side: a dispatch stays a request, and no agent joins.
    standIn.setWorker(false);
    const results = [];
    for (const target of targets) {
      const media: MediaProvider = createLiveKitMedia({
        url: target.url,
        apiKey: target.key,
        apiSecret: target.secret,
        agentName: 'kyc-voice-agent',
        tokenTtlSeconds: 600,
        requestTimeoutSeconds: 10,
      });
      const room = freshRoom();
      const ids: (string | null)[] = [];
      results.push([
        await outcome(() => media.createRoom(room, 's1')),
        await outcome(() => media.agentPresence(room)),
        await outcome(async () => (ids[0] = await media.dispatchAgent(room, 's1'))),
        await outcome(async () => (ids[1] = await media.replaceAgentDispatch(room, 's1', ids[0]!))),
        await outcome(async () => (await media.findAgentDispatch(room, null)) === ids[1]),
        // The stale dispatch is gone already: replacing it again still dispatches.
        await outcome(async () => (ids[2] = await media.replaceAgentDispatch(room, 's1', ids[0]!))),
        await outcome(() => media.agentPresence(room)),
        // A dead job's presence: an identity that is not (or no longer) in the room removes nobody.
        await outcome(() => media.removeAgent(room, 'agent-AJ_gone')),
        await outcome(() => media.deleteRoom(room)),
        await outcome(() => media.agentPresence(room)),
        await outcome(() => media.removeAgent(room, 'agent-AJ_gone')),
      ]);
    }
    expect(results[1]).toEqual(results[0]);
    expect(results[0]).toEqual([
      { resolved: null },
      { resolved: 'abs' },
      { resolved: 'AD_' },
      { resolved: 'AD_' },
      { resolved: true },
      { resolved: 'AD_' },
      { resolved: 'abs' },
      { resolved: false },
      { resolved: null },
      { resolved: 'roo' },
      { resolved: false },
    ]);
  }, 60_000);
});
