import {
  AccessToken,
  AgentDispatchClient,
  DataPacket_Kind,
  ParticipantInfo,
  RoomAgentDispatch,
  RoomConfiguration,
  RoomServiceClient,
  ServerError,
} from 'livekit-server-sdk';
import { AGENT_NOTICE_TOPIC } from '../domain/agent-notice.js';
import { OPERATOR_IDENTITY_PREFIX } from '../domain/voice-session.js';
import type { MediaProvider, TokenRequest } from './media-port.js';

export interface LiveKitSettings {
  url: string;
  apiKey: string;
  apiSecret: string;
  agentName: string;
  tokenTtlSeconds: number;
  requestTimeoutSeconds: number;
}

/** The participant name deployed clients and agents expect (clients.md). */
const PARTICIPANT_NAME = 'kycis-client';

/**
 * A dispatch's metadata: the session, and `takeover` on a dispatch that replaces one whose agent
 * never joined or left mid-call, so the new agent opens by saying sorry for the wait (agent/job.ts).
 */
const sessionMetadata = (sessionId: string, takeover = false) =>
  JSON.stringify(takeover ? { session_id: sessionId, takeover: true } : { session_id: sessionId });

const ROOM_PARTICIPANTS = 2;

/**
 * The participant kind of an agent, read from the protocol's own enum: livekit-server-sdk
 * re-exports `ParticipantInfo` but not its `Kind` enum.
 */
function agentKind(): number {
  const field = ParticipantInfo.fields.findJsonName('kind');
  const agent = field?.kind === 'enum' ? field.T.findName('AGENT') : undefined;
  if (!agent) throw new Error('livekit-server-sdk: ParticipantInfo.kind has no AGENT value');
  return agent.no;
}
const AGENT_KIND = agentKind();

/** Whether a participant's kind, as the media server reports it (a room listing, a webhook), is an agent's. */
export const isAgentKind = (kind: unknown): boolean => Number(kind) === AGENT_KIND;

/**
 * LiveKit through `livekit-server-sdk`, with clients built from injected settings only (never
 * from the SDK's implicit environment). Failover is off: it only engages for LiveKit Cloud and
 * would multiply the per-call budget that the start sequence is planned around.
 */
export function createLiveKitMedia(settings: LiveKitSettings): MediaProvider {
  const { url, apiKey, apiSecret, agentName, tokenTtlSeconds } = settings;
  const options = { requestTimeout: settings.requestTimeoutSeconds, failover: false };
  const rooms = new RoomServiceClient(url, apiKey, apiSecret, options);
  const dispatches = new AgentDispatchClient(url, apiKey, apiSecret, options);

  return {
    ready: true,
    url,
    tokenTtlSeconds,
    callTimeoutMs: settings.requestTimeoutSeconds * 1000,

    async createRoom(room, sessionId) {
      // The user and one person besides (an operator): the server counts no agent against this, so
      // a second agent is kept out by the agent itself (docs/decisions/0009-voice-sessions-degrade-never-fail.md).
      await rooms.createRoom({ name: room, metadata: sessionMetadata(sessionId), maxParticipants: ROOM_PARTICIPANTS });
    },

    async findAgentDispatch(room, preferredId) {
      const ours = (await dispatches.listDispatch(room)).filter((dispatch) => dispatch.agentName === agentName);
      return (ours.find((dispatch) => dispatch.id === preferredId) ?? ours[0])?.id ?? null;
    },

    async dispatchAgent(room, sessionId) {
      const dispatch = await dispatches.createDispatch(room, agentName, { metadata: sessionMetadata(sessionId) });
      return dispatch.id;
    },

    async agentPresence(room) {
      // Listing the room first: the participants of a room the server does not hold are an error
      // after a wait (docs/explanation/livekit-stand-in.md), and "gone" is what the caller needs to know.
      const [held] = await rooms.listRooms([room]);
      if (!held) return 'room_gone';
      // An operator in the room serves the call as an agent would: an agent that left for them
      // (AGENT_ON_OPERATOR=leave) is not replaced while they are there (docs/explanation/handoff.md).
      const participants = await rooms.listParticipants(room);
      const serving = (participant: ParticipantInfo) =>
        (participant.kind as number) === AGENT_KIND || participant.identity.startsWith(OPERATOR_IDENTITY_PREFIX);
      return participants.some(serving) ? 'present' : 'absent';
    },

    async replaceAgentDispatch(room, sessionId, staleId) {
      if (staleId !== null) {
        try {
          await dispatches.deleteDispatch(staleId, room);
        } catch (error) {
          if (!(error instanceof ServerError && error.code === 'not_found')) throw error;
        }
      }
      const dispatch = await dispatches.createDispatch(room, agentName, { metadata: sessionMetadata(sessionId, true) });
      return dispatch.id;
    },

    async removeAgent(room, identity) {
      try {
        // As agentPresence: a room the server does not hold answers its participants only after a wait.
        const [held] = await rooms.listRooms([room]);
        if (!held) return false;
        const participant = (await rooms.listParticipants(room)).find((each) => each.identity === identity);
        if (!participant || (participant.kind as number) !== AGENT_KIND) return false;
        await rooms.removeParticipant(room, identity);
        return true;
      } catch (error) {
        // The room, or the participant, went on its own meanwhile: nothing left to remove.
        if (error instanceof ServerError && error.code === 'not_found') return false;
        throw error;
      }
    },

    async deleteRoom(room) {
      try {
        await rooms.deleteRoom(room);
      } catch (error) {
        if (error instanceof ServerError && error.code === 'not_found') return;
        throw error;
      }
    },

    async notifyAgent(room, notice) {
      await rooms.sendData(room, new TextEncoder().encode(JSON.stringify(notice)), DataPacket_Kind.RELIABLE, {
        topic: AGENT_NOTICE_TOPIC,
      });
    },

    mintToken(request: TokenRequest) {
      const token = new AccessToken(apiKey, apiSecret, {
        identity: request.identity,
        name: PARTICIPANT_NAME,
        ttl: tokenTtlSeconds,
      });
      token.addGrant({
        roomJoin: true,
        room: request.room,
        canPublish: true,
        canSubscribe: true,
        canPublishData: true,
      });
      if (request.dispatchAgent) {
        token.roomConfig = new RoomConfiguration({
          agents: [new RoomAgentDispatch({ agentName, metadata: sessionMetadata(request.sessionId) })],
        });
      }
      return token.toJwt();
    },
  };
}
