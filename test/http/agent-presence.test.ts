import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/http/server.js';
import { PRESENCE_GRACE_MS } from '../../src/use-cases/agent-presence.js';
import type { Harness } from '../support/harness.js';
import { START_TIME, advance, createHarness, serve, settle } from '../support/harness.js';
import type { LiveKitStandIn } from '../support/livekit-stand-in.js';
import { startLiveKitStandIn } from '../support/livekit-stand-in.js';

let lk: LiveKitStandIn;
beforeAll(async () => void (lk = await startLiveKitStandIn()));
afterAll(() => lk.close());
beforeEach(() => lk.reset());

const ROOM = 'kyc-room-s1';
const KEY = 'ops-key';
const harness = () => createHarness({ env: { STORE: 'sqlite', API_KEY: KEY, ...lk.env() } });

type Item = { timestamp: string; payload: Record<string, unknown> };
const agentItems = async (h: Harness) =>
  ((await h.http.get('/api/activity?kind=voice_agent').set('x-api-key', KEY)).body.items as Item[]).map((item) => ({
    at: item.timestamp,
    outcome: item.payload.outcome,
  }));
const agentsInRoom = () =>
  (lk.participants.get(ROOM) ?? [])
    .filter((participant) => participant.kind === 'AGENT')
    .map((participant) => participant.identity);

/** Lets what a close or a timer started finish: real sockets and the stand-in's real HTTP. */
async function settled(): Promise<void> {
  for (let round = 0; round < 20; round += 1) {
    for (let turn = 0; turn < 40; turn += 1) await settle();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A job's presence connection, as agent/presence.ts opens it: held until aborted (the process dying closes it the same way). */
async function holdPresence(server: RunningServer, identity: string) {
  const abort = new AbortController();
  const url = `${server.url}/v1/assistant/presence/s1?identity=${encodeURIComponent(identity)}`;
  const response = await fetch(url, { headers: { 'x-api-key': KEY }, signal: abort.signal });
  const reader = response.body!.getReader();
  const first = new TextDecoder().decode((await reader.read()).value);
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    first,
    close: () => abort.abort(),
  };
}

/** Runs `test` with the harness's app on a real socket, closed after it whatever happens. */
async function onServer(test: (h: Harness, server: RunningServer) => Promise<void>): Promise<void> {
  const h = harness();
  const server = await serve(h);
  try {
    await test(h, server);
  } finally {
    await server.close(1_000);
  }
}

/** A call whose agent has joined (its first context fetch), and that agent's identity. */
async function callWithAgent(h: Harness): Promise<string> {
  await h.http
    .post('/v1/assistant/session/start')
    .set('x-api-key', KEY)
    .send({ session_id: 's1', screen: 'pan_details' })
    .expect(200);
  await h.http.get('/v1/assistant/context/s1').set('x-api-key', KEY).expect(200);
  const [agent] = agentsInRoom();
  expect(agent).toBeDefined();
  return agent!;
}

describe("an agent's presence connection (GET /v1/assistant/presence/{session_id})", () => {
  it('closed and not opened again: the agent is taken out of the room and a new one is sent, at the end of the grace', () =>
    onServer(async (h, server) => {
      const dead = await callWithAgent(h);
      const held = await holdPresence(server, dead);
      expect(held.status).toBe(200);
      expect(held.contentType).toContain('text/event-stream');
      expect(held.first).toBe(
        `event: present\ndata: ${JSON.stringify({ session_id: 's1', identity: dead, grace_ms: PRESENCE_GRACE_MS })}\n\n`,
      );
      advance(h.clock, 5_000);
      held.close();
      await settled();
      // Within the grace nothing happens: a live job would have opened it again by now.
      advance(h.clock, PRESENCE_GRACE_MS - 1_000);
      await settled();
      expect(agentsInRoom()).toEqual([dead]);
      expect(await agentItems(h)).toEqual([]);
      advance(h.clock, 1_000);
      await settled();
      const gone = new Date(START_TIME + 5_000 + PRESENCE_GRACE_MS).toISOString();
      expect(await agentItems(h)).toEqual([
        { at: gone, outcome: 'agent_left' },
        { at: gone, outcome: 'redispatched' },
      ]);
      // The dead participant is out; the one in the room is the new dispatch's.
      expect(agentsInRoom()).toHaveLength(1);
      expect(agentsInRoom()).not.toContain(dead);
      expect(lk.methodsCalled()).toContain('RemoveParticipant');
    }));

  it('opened again within the grace (a live job reconnecting): the agent stays, and nothing is dispatched', () =>
    onServer(async (h, server) => {
      const agent = await callWithAgent(h);
      const first = await holdPresence(server, agent);
      first.close();
      await settled();
      advance(h.clock, 1_000);
      const again = await holdPresence(server, agent);
      advance(h.clock, PRESENCE_GRACE_MS * 3);
      await settled();
      expect(agentsInRoom()).toEqual([agent]);
      expect(await agentItems(h)).toEqual([]);
      expect(lk.methodsCalled()).not.toContain('RemoveParticipant');
      again.close();
    }));

  it('never takes out a participant that is not an agent: a user identity named by a presence is left in the room', () =>
    onServer(async (h, server) => {
      await callWithAgent(h);
      lk.participants.set(ROOM, [
        ...(lk.participants.get(ROOM) ?? []),
        { sid: 'PA_user', identity: 'user-s1', kind: 'STANDARD' },
      ]);
      const held = await holdPresence(server, 'user-s1');
      held.close();
      await settled();
      advance(h.clock, PRESENCE_GRACE_MS);
      await settled();
      expect((lk.participants.get(ROOM) ?? []).map((participant) => participant.identity)).toContain('user-s1');
      expect(lk.methodsCalled()).not.toContain('RemoveParticipant');
      // The room was checked, and its agent found present: nothing to do.
      expect(await agentItems(h)).toEqual([]);
    }));

  it('a service that stops ends the connections and takes out no agent', async () => {
    const h = harness();
    const server = await serve(h);
    const agent = await callWithAgent(h);
    await holdPresence(server, agent);
    await server.close(1_000);
    advance(h.clock, PRESENCE_GRACE_MS * 2);
    await settled();
    expect(agentsInRoom()).toEqual([agent]);
    expect(lk.methodsCalled()).not.toContain('RemoveParticipant');
  });

  it('refuses an unknown session (404) and a missing or malformed identity (422), holding nothing', async () => {
    const h = harness();
    await callWithAgent(h);
    const unknown = await h.http
      .get('/v1/assistant/presence/nobody?identity=agent-1')
      .set('x-api-key', KEY)
      .expect(404);
    expect(unknown.body.detail).toMatch(/not found/);
    const missing = await h.http.get('/v1/assistant/presence/s1').set('x-api-key', KEY).expect(422);
    expect(missing.body.detail).toMatch(/identity/);
    const spaced = await h.http.get('/v1/assistant/presence/s1?identity=agent%201').set('x-api-key', KEY).expect(422);
    expect(spaced.body.detail).toMatch(/identity/);
    await h.http.get('/v1/assistant/presence/s1?identity=agent-1').expect(401);
  });
});
