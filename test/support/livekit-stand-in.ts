import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt } from 'jose';
import type { ClaimGrants } from 'livekit-server-sdk';
import { TokenVerifier } from 'livekit-server-sdk';

/**
 * A LiveKit server as `livekit-server-sdk` sees it over the wire (docs/decisions/0009-voice-sessions-degrade-never-fail.md):
 * Twirp JSON on /twirp/livekit.<Service>/<Method>, admin JWTs verified with the API secret,
 * rooms and agent dispatches kept in memory, every call recorded, faults injected on demand.
 * test-media/stand-in-conformance.test.ts holds its answers to a real server's
 * (docs/explanation/livekit-stand-in.md).
 */
export const STAND_IN_KEY = 'devkey';
export const STAND_IN_SECRET = 'secret';

type Body = Record<string, unknown>;
export interface RecordedCall {
  service: string;
  method: string;
  body: Body;
  claims: ClaimGrants | undefined;
  requestId: string | undefined;
}
export interface StandInRoom {
  sid: string;
  name: string;
  metadata: string;
  empty_timeout: number;
  departure_timeout: number;
  max_participants: number;
  creation_time: string;
}
export interface StandInDispatch {
  id: string;
  agent_name: string;
  room: string;
  metadata: string;
}
/** A Twirp error, a dropped connection, or a server that does the work and never answers. */
export interface StandInDataPacket {
  room: string;
  data: string;
  topic: string;
  kind: string;
}

/** Who is in a room: an agent's kind is `AGENT` on the wire; a user's is left out (STANDARD). */
export interface StandInParticipant {
  sid: string;
  identity: string;
  // As the server's JSON names ParticipantInfo.Kind: STANDARD for a user, AGENT for an agent.
  kind?: 'AGENT' | 'STANDARD';
}

export type Fault = { status: number; code: string; msg: string } | 'drop' | 'hang';
/**
 * How a gated call ends: `ok` does the work and answers it; `fail` answers an error without doing
 * it; `lost` does the work and answers an error, as a reply lost to a timeout would look to the
 * service, without the wait.
 */
export type GateOutcome = 'ok' | 'fail' | 'lost';
type Gate = { method: string; room: string; outcome: Promise<GateOutcome>; arrived: () => void };
type Planned = Fault | { held: Promise<void>; arrived: () => void };
// The real server's errors from a room's own node carry the prefix its RPC layer adds.
const UNAVAILABLE = { code: 'unavailable', msg: 'twirp error unknown: no response from servers' };
const NO_ROOM = { code: 'not_found', msg: 'twirp error unknown: requested room does not exist' };

class TwirpFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly msg: string,
  ) {
    super(msg);
  }
}

/** jose's error codes, as the real server's JWT library words the same refusals. */
const JWT_REFUSALS: Record<string, string> = {
  ERR_JWS_SIGNATURE_VERIFICATION_FAILED: 'token signature is invalid: signature is invalid',
  ERR_JWT_EXPIRED: 'token has invalid claims: token is expired',
};

const text = (res: ServerResponse, status: number, message: string) =>
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' }).end(message);
// Exactly `application/json`: the SDK parses Twirp errors only under that content type.
const json = (res: ServerResponse, status: number, value: unknown) =>
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(value));
/** The SDK sends lowerCamelCase; other clients send snake_case. */
const field = (body: Body, camel: string, snake: string): unknown => body[camel] ?? body[snake];
const asText = (value: unknown): string => (typeof value === 'string' ? value : '');

export async function startLiveKitStandIn(keys: Record<string, string> = { [STAND_IN_KEY]: STAND_IN_SECRET }) {
  const calls: RecordedCall[] = [];
  const rooms = new Map<string, StandInRoom>();
  const dispatches: StandInDispatch[] = [];
  const dataPackets: StandInDataPacket[] = [];
  const participants = new Map<string, StandInParticipant[]>();
  /**
   * A worker registered under the agent's name: it takes every dispatch and its agent joins the
   * room at once. Off, dispatches wait as the real server's do when no worker is up.
   */
  let workerUp = true;
  const join = (room: string, participant: StandInParticipant) =>
    participants.set(room, [...(participants.get(room) ?? []), participant]);
  const agentJoins = (room: string) =>
    join(room, { sid: nextId('PA'), identity: `agent-${nextId('AJ')}`, kind: 'AGENT' });
  /**
   * The dispatch the real server adds to every room it creates, with an empty agent name (for
   * workers registered without one): listed with the room's dispatches, never in `dispatches`,
   * which holds the ones asked for.
   */
  const automatic = new Map<string, StandInDispatch>();
  const planned = new Map<string, Planned[]>();
  const gates: Gate[] = [];
  let serial = 0;
  const nextId = (prefix: string) => `${prefix}_${String((serial += 1)).padStart(12, '0')}`;

  /** A room that does not exist yet is created with what the request says; an existing one is returned as it is. */
  const ensureRoom = (name: string, metadata = '', maxParticipants = 0): StandInRoom => {
    const existing = rooms.get(name);
    if (existing) return existing;
    const room = {
      sid: nextId('RM'),
      name,
      metadata,
      empty_timeout: 300,
      departure_timeout: 20,
      max_participants: maxParticipants,
      creation_time: String(Math.floor(Date.now() / 1000)),
    };
    rooms.set(name, room);
    automatic.set(name, { id: nextId('AD'), agent_name: '', room: name, metadata: '' });
    return room;
  };
  const roomServed = (name: string) => {
    if (!rooms.has(name)) throw new TwirpFailure(503, UNAVAILABLE.code, UNAVAILABLE.msg);
  };
  const dispatchJson = (d: StandInDispatch) => ({
    ...d,
    state: { jobs: [], created_at: '0', deleted_at: '0' },
    restart_policy: 'JRP_ON_FAILURE',
    deployment: '',
    attributes: {},
  });
  const canAdminRoom = (claims: ClaimGrants | undefined, body: Body) =>
    claims?.video?.roomAdmin === true && claims.video.room === body.room;

  const methods: Record<
    string,
    { service: string; allowed: (claims: ClaimGrants | undefined, body: Body) => boolean; run: (body: Body) => unknown }
  > = {
    CreateRoom: {
      service: 'RoomService',
      allowed: (claims) => claims?.video?.roomCreate === true,
      // The real server (1.13) takes an empty name too, and leaves an existing room as it was:
      // a second create changes neither its metadata nor its participant cap.
      run: (body) => {
        const maxParticipants = Number(field(body, 'maxParticipants', 'max_participants') ?? 0);
        return ensureRoom(
          asText(body.name),
          asText(body.metadata),
          Number.isFinite(maxParticipants) ? maxParticipants : 0,
        );
      },
    },
    ListRooms: {
      service: 'RoomService',
      allowed: (claims) => claims?.video?.roomList === true,
      run: (body) => {
        const names = Array.isArray(body.names) ? body.names : [];
        return { rooms: [...rooms.values()].filter((room) => names.length === 0 || names.includes(room.name)) };
      },
    },
    DeleteRoom: {
      service: 'RoomService',
      allowed: (claims) => claims?.video?.roomCreate === true,
      run: (body) => {
        const name = asText(body.room);
        if (!rooms.delete(name)) throw new TwirpFailure(404, NO_ROOM.code, NO_ROOM.msg);
        automatic.delete(name);
        participants.delete(name);
        for (let i = dispatches.length - 1; i >= 0; i -= 1) if (dispatches[i]!.room === name) dispatches.splice(i, 1);
        return {};
      },
    },
    CreateDispatch: {
      service: 'AgentDispatchService',
      allowed: canAdminRoom,
      run: (body) => {
        const room = ensureRoom(asText(body.room)).name;
        const dispatch = {
          id: nextId('AD'),
          agent_name: asText(field(body, 'agentName', 'agent_name')),
          room,
          metadata: asText(body.metadata),
        };
        dispatches.push(dispatch);
        if (workerUp && dispatch.agent_name !== '') agentJoins(room);
        return dispatchJson(dispatch);
      },
    },
    DeleteDispatch: {
      service: 'AgentDispatchService',
      allowed: canAdminRoom,
      run: (body) => {
        const room = asText(body.room);
        roomServed(room);
        const id = asText(field(body, 'dispatchId', 'dispatch_id'));
        const index = dispatches.findIndex((d) => d.room === room && d.id === id);
        if (index < 0) throw new TwirpFailure(404, 'not_found', 'dispatch not found');
        const [removed] = dispatches.splice(index, 1);
        return dispatchJson(removed!);
      },
    },
    ListParticipants: {
      service: 'RoomService',
      allowed: canAdminRoom,
      run: (body) => {
        const room = asText(body.room);
        roomServed(room);
        return { participants: participants.get(room) ?? [] };
      },
    },
    RemoveParticipant: {
      service: 'RoomService',
      allowed: canAdminRoom,
      run: (body) => {
        const room = asText(body.room);
        roomServed(room);
        const identity = asText(body.identity);
        const held = participants.get(room) ?? [];
        if (!held.some((participant) => participant.identity === identity))
          throw new TwirpFailure(404, 'not_found', 'twirp error unknown: participant does not exist');
        participants.set(
          room,
          held.filter((participant) => participant.identity !== identity),
        );
        return {};
      },
    },
    // A room the real server does not hold has no node to answer for it: after waiting for one
    // (about 3 s) it says unavailable. The SDK sends the payload as protobuf JSON bytes (base64),
    // the kind as its enum name, and a random nonce.
    SendData: {
      service: 'RoomService',
      allowed: canAdminRoom,
      run: (body) => {
        const room = asText(body.room);
        roomServed(room);
        const data = Buffer.from(asText(body.data), 'base64').toString('utf8');
        // Protobuf JSON leaves out an enum at its default: no kind is RELIABLE (0).
        dataPackets.push({ room, data, topic: asText(body.topic), kind: String(body.kind ?? 'RELIABLE') });
        return {};
      },
    },
    ListDispatch: {
      service: 'AgentDispatchService',
      allowed: canAdminRoom,
      // As SendData: a room the server does not hold is unavailable, not an empty list.
      run: (body) => {
        const room = asText(body.room);
        roomServed(room);
        const id = asText(field(body, 'dispatchId', 'dispatch_id'));
        const found = [...dispatches, automatic.get(room)!].filter(
          (d) => d.room === room && (id === '' || d.id === id),
        );
        return { agent_dispatches: found.map(dispatchJson) };
      },
    },
  };

  async function verify(header: string | undefined): Promise<{ claims?: ClaimGrants; refusal?: string }> {
    if (header === undefined) return {};
    if (!header.startsWith('Bearer ')) return { refusal: 'invalid authorization header. Must start with Bearer ' };
    const token = header.slice('Bearer '.length);
    let issuer: string | undefined;
    try {
      issuer = decodeJwt(token).iss;
    } catch {
      return { refusal: 'invalid authorization token' };
    }
    const secret = issuer === undefined ? undefined : keys[issuer];
    if (issuer === undefined || secret === undefined) return { refusal: `invalid API key: ${issuer ?? ''}` };
    try {
      return { claims: await new TokenVerifier(issuer, secret).verify(token, 60) };
    } catch (error) {
      // The real server quotes the token it refused, and why, in the words of its JWT library.
      const why = JWT_REFUSALS[(error as { code?: string }).code ?? ''];
      return { refusal: why ? `invalid token: ${token}, error: ${why}` : 'invalid authorization token' };
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const { claims, refusal } = await verify(req.headers.authorization);
    if (refusal) return void text(res, 401, refusal);
    const route = /^\/twirp\/livekit\.(RoomService|AgentDispatchService)\/(\w+)$/.exec(req.url ?? '');
    if (!route) return void text(res, 404, '404 page not found');
    const service = route[1]!;
    const name = route[2]!;
    const contentType = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    const method = methods[name];
    // Every bad route names itself in the error's meta, as Twirp's generated servers do.
    const badRoute = (msg: string) =>
      json(res, 404, { code: 'bad_route', msg, meta: { twirp_invalid_route: `${req.method} ${req.url}` } });
    if (req.method !== 'POST') return void badRoute(`unsupported method "${req.method}" (only POST is allowed)`);
    if (contentType !== 'application/json') return void badRoute(`unexpected Content-Type: "${contentType}"`);
    if (!method || method.service !== service) return void badRoute(`no handler for path "${req.url}"`);
    let body: Body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Body;
    } catch {
      return void json(res, 400, { code: 'malformed', msg: 'the json request could not be decoded' });
    }
    calls.push({
      service,
      method: name,
      body,
      claims,
      requestId: req.headers['x-livekit-request-id'] as string | undefined,
    });
    if (!method.allowed(claims, body))
      return void json(res, 401, { code: 'unauthenticated', msg: 'permissions denied' });

    // The room a call is about: ListRooms names it in a list of one.
    const room =
      asText(body.room) ||
      asText(body.name) ||
      (Array.isArray(body.names) && body.names.length === 1 ? asText(body.names[0]) : '');
    const index = gates.findIndex((gate) => gate.method === name && gate.room === room);
    const [gate] = index >= 0 ? gates.splice(index, 1) : [];
    let outcome: GateOutcome = 'ok';
    if (gate) {
      gate.arrived();
      outcome = await gate.outcome;
      if (outcome === 'fail') return void json(res, 503, UNAVAILABLE);
    }
    const fault = planned.get(name)?.shift();
    if (fault === 'drop') return void req.socket.destroy();
    if (typeof fault === 'object' && 'status' in fault)
      return void json(res, fault.status, { code: fault.code, msg: fault.msg });
    let result: unknown;
    try {
      result = method.run(body);
    } catch (error) {
      if (!(error instanceof TwirpFailure)) throw error;
      return void json(res, error.status, { code: error.code, msg: error.msg });
    }
    if (outcome === 'lost') return void json(res, 503, UNAVAILABLE);
    // The work is done either way; only the answer is late, or never comes.
    if (fault === 'hang') return;
    if (fault) {
      fault.arrived();
      await fault.held;
    }
    if (!res.destroyed) json(res, 200, result);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => (res.headersSent ? res.destroy() : text(res, 500, 'stand-in failure')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const plan = (method: string, entry: Planned) => planned.set(method, [...(planned.get(method) ?? []), entry]);

  return {
    url,
    calls,
    rooms,
    dispatches,
    /** What SendData delivered, in order: the room, the payload as text, its topic and kind. */
    dataPackets,
    /** What the service needs to talk to this server. */
    env: (): Record<string, string> => ({
      LIVEKIT_URL: url,
      LIVEKIT_API_KEY: STAND_IN_KEY,
      LIVEKIT_API_SECRET: STAND_IN_SECRET,
    }),
    methodsCalled: () => calls.map((call) => call.method),
    participants,
    /** Whether a worker takes dispatches (see `workerUp`); turning it on does not serve dispatches made before. */
    setWorker(up: boolean): void {
      workerUp = up;
    },
    /** An agent joins `room`, as a worker's job would. */
    agentJoins,
    /** Every agent leaves `room` (a crashed job), the user stays. */
    agentsLeave(room: string): void {
      participants.set(
        room,
        (participants.get(room) ?? []).filter((participant) => participant.kind !== 'AGENT'),
      );
    },
    /** The server restarts without its rooms (room.auto_create off): everything it held is gone. */
    forgetRooms(): void {
      rooms.clear();
      automatic.clear();
      participants.clear();
      dispatches.length = 0;
    },
    failNext: (method: string, fault: Fault) => plan(method, fault),
    /** The next call to `method` does its work, then answers only once released. */
    holdNext(method: string): { arrived: Promise<void>; release: () => void } {
      let release!: () => void;
      let arrived!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const arrival = new Promise<void>((resolve) => (arrived = resolve));
      plan(method, { held, arrived });
      return { arrived: arrival, release };
    },
    /**
     * The next call to `method` for `room` waits, before doing anything, until told how to end.
     * Keyed by room, so that sessions sharing the server never take each other's gate.
     */
    gateNext(method: string, room: string): { arrived: Promise<void>; answer: (outcome: GateOutcome) => void } {
      let answer!: (outcome: GateOutcome) => void;
      let arrived!: () => void;
      const outcome = new Promise<GateOutcome>((resolve) => (answer = resolve));
      const arrival = new Promise<void>((resolve) => (arrived = resolve));
      gates.push({ method, room, outcome, arrived });
      return { arrived: arrival, answer };
    },
    reset(): void {
      calls.length = 0;
      dispatches.length = 0;
      dataPackets.length = 0;
      rooms.clear();
      automatic.clear();
      participants.clear();
      workerUp = true;
      planned.clear();
      gates.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type LiveKitStandIn = Awaited<ReturnType<typeof startLiveKitStandIn>>;
