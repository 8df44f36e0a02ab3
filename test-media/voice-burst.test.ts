import { loadavg } from 'node:os';
import { dispose } from '@livekit/rtc-node';
import { AgentDispatchClient } from 'livekit-server-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually.js';
import type { MediaStack } from './support/media-stack.js';
import { startMediaStack } from './support/media-stack.js';
import { agentsIn } from './support/voice-call.js';

const STARTS = 20;

let stack: MediaStack;

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

beforeAll(async () => {
  stack = await startMediaStack({
    models: { reply: () => 'Please check the highlighted field.', transcript: () => 'hello' },
    // One warm job process per call: each has loaded the agent and its VAD before the burst.
    worker: { AGENT_IDLE_PROCESSES: String(STARTS) },
  });
  await eventually(
    () => stack.worker.readyProcesses(),
    (ready) => ready >= STARTS,
    240_000,
  );
}, 300_000);

afterAll(async () => {
  await stack?.stop();
  await dispose();
});

describe('twenty voice starts at once on a real LiveKit server', () => {
  it('makes twenty rooms, each with exactly one agent; dispatch-to-joined is timed on the server clock', async () => {
    const { service, rooms, liveKit } = stack;
    const dispatches = new AgentDispatchClient(liveKit.url, liveKit.apiKey, liveKit.apiSecret);
    const sessionIds = Array.from({ length: STARTS }, (_, i) => `burst-${i + 1}`);
    const load = loadavg()[0]!;
    const started = await Promise.all(sessionIds.map((id) => service.startVoice(id)));
    const names = started.map((start) => start.media_room);
    expect(new Set(names).size).toBe(STARTS);

    // Twenty WebRTC joins at once on two cores: now and then one times out ("transport timed out"),
    // or an agent that joined is cut, and the call's agent watch sends another
    // (docs/decisions/0032-an-agent-joins-or-the-call-ends.md), as it would for any call. What must
    // hold is where the burst ends: every room with exactly one agent, still so a while later (never
    // two in a room, no job retried beside the one in it). How many rooms needed a second agent is printed.
    const agentsInEach = () => Promise.all(names.map((name) => agentsIn(rooms, name)));
    type Agents = Awaited<ReturnType<typeof agentsInEach>>;
    const oneEach = (agents: Agents) => agents.every((inRoom) => inRoom.length === 1);
    const [agents] = await eventually(
      async (): Promise<[Agents, Agents]> => {
        const first = await agentsInEach();
        if (!oneEach(first)) return [first, first];
        await new Promise((resolve) => setTimeout(resolve, 3000));
        return [await agentsInEach(), first];
      },
      ([now, before]) => oneEach(now) && now.every((inRoom, i) => inRoom[0]!.identity === before[i]![0]!.identity),
      150_000,
    ).catch(async (error: unknown) => {
      // A burst that does not settle says why: the rooms off, and the service's and the jobs' lines about them.
      const now = await agentsInEach();
      const off = names.filter((_, i) => now[i]!.length !== 1);
      process.stdout.write(
        `[burst] not settled; agents per room: ${now.map((inRoom) => inRoom.length).join(' ')}\n` +
          stack.linesAbout(
            (line) => off.some((name) => line.includes(name)) || /leaving|redispatch|not join/i.test(line),
          ) +
          '\n',
      );
      throw error;
    });
    const listed = (await rooms.listRooms()).map((room) => room.name);
    expect(listed.filter((name) => names.includes(name))).toHaveLength(STARTS);
    const replaced = await Promise.all(
      sessionIds.map(
        async (id) =>
          (await service.activity(id, 'voice_agent')).filter((item) => item.payload.outcome === 'redispatched').length,
      ),
    );
    expect(agents.map((inRoom) => inRoom.length)).toEqual(names.map(() => 1));
    expect(new Set(agents.flat().map((agent) => agent.identity)).size).toBe(STARTS);

    // From the server's own timestamps: the dispatch's creation (ns), the job's assignment to the
    // worker (ns), and the agent participant's connection (ms).
    const timings = await Promise.all(
      names.map(async (name, i) => {
        // The server lists its own automatic dispatch of every room too (empty agent name, for
        // workers registered without one): ours is the one named, and there is one of it.
        // The listing's job state is filled in some time after the job runs: read it again for a
        // while. The one agent in each room (above) is what shows one job; the state only times it.
        const ours = (listed: Awaited<ReturnType<typeof dispatches.listDispatch>>) =>
          listed.filter((dispatch) => dispatch.agentName === service.agentName);
        const listed = await eventually(
          () => dispatches.listDispatch(name),
          (now) => (ours(now)[0]?.state?.jobs.length ?? 0) > 0,
          10_000,
        ).catch(() => dispatches.listDispatch(name));
        expect(ours(listed)).toHaveLength(1);
        expect(
          listed.filter((dispatch) => dispatch.agentName !== service.agentName).map((dispatch) => dispatch.agentName),
        ).toEqual(['']);
        const dispatch = ours(listed)[0]!;
        expect(dispatch.state!.jobs.length).toBeLessThanOrEqual(1);
        const createdMs = Number(dispatch.state!.createdAt / 1_000_000n);
        const job = dispatch.state!.jobs[0];
        const assignedMs = job?.state?.startedAt === undefined ? undefined : Number(job.state.startedAt / 1_000_000n);
        const joinedMs = Number(agents[i]![0]!.joinedAtMs);
        return {
          toAssigned: assignedMs === undefined ? undefined : assignedMs - createdMs,
          toJoined: joinedMs - createdMs,
        };
      }),
    );
    const joined = timings.map((timing) => timing.toJoined).sort((a, b) => a - b);
    const assigned = timings
      .flatMap((timing) => (timing.toAssigned === undefined ? [] : [timing.toAssigned]))
      .sort((a, b) => a - b);
    for (const value of joined) expect(value).toBeGreaterThanOrEqual(0);
    process.stdout.write(
      `[burst] ${STARTS} starts at once, load average ${load.toFixed(1)} before, ${loadavg()[0]!.toFixed(1)} after: ` +
        `dispatch to job assigned p50 ${percentile(assigned, 50)} ms p99 ${percentile(assigned, 99)} ms (${assigned.length} of ${STARTS} listed their job); ` +
        `dispatch to agent joined p50 ${percentile(joined, 50)} ms p99 ${percentile(joined, 99)} ms (all: ${joined.join(', ')}); ` +
        `${replaced.filter((count) => count > 0).length} of ${STARTS} rooms needed another agent (a room's times are then its last dispatch's)\n`,
    );
    // A sanity bound only (the figure itself is in docs/reference/voice-agent.md): a warm worker on a busy
    // two-core machine still joins well within this.
    expect(percentile(joined, 99)).toBeLessThan(60_000);

    await Promise.all(sessionIds.map((id) => service.stopVoice(id)));
    // Past the media suite's 90 s: the burst may take most of its 150 s to settle on a loaded machine.
  }, 240_000);
});
