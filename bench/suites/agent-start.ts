import { dispose } from '@livekit/rtc-node';
import { execFileSync } from 'node:child_process';
import { AgentDispatchClient } from 'livekit-server-sdk';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { DEFAULT_AGENT_MAX_JOBS } from '../../agent/settings.js';
import { startMediaStack } from '../../test-media/support/media-stack.js';
import type { SimulatedUser } from '../../test-media/support/simulated-user.js';
import { joinAsUser } from '../../test-media/support/simulated-user.js';
import { agentsIn } from '../../test-media/support/voice-call.js';
import { percentile } from '../lib/stats.js';

type Stack = Awaited<ReturnType<typeof startMediaStack>> & { dispatches: AgentDispatchClient };

/** How often the room is listed while waiting for the agent: the resolution of each latency. */
const POLL_MS = 10;

/** The service's own histogram of dispatch to the agent's first context fetch (`kyc_voice_agent_join_seconds`). */
async function joinHistogram(stack: Stack): Promise<{ count: number; sum: number; withinTwoSeconds: number }> {
  const response = await fetch(`${stack.service.url}/metrics`, { headers: { 'x-api-key': stack.service.apiKey } });
  const text = await response.text();
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  return {
    count: read('kyc_voice_agent_join_seconds_count'),
    sum: read('kyc_voice_agent_join_seconds_sum'),
    withinTwoSeconds: read('kyc_voice_agent_join_seconds_bucket\\{le="2"\\}'),
  };
}

/** The worker's process group: how many processes, and their proportional set sizes summed (shared pages counted once). */
function workerMemory(group: number): { processes: number; pssMiB: number } {
  const pids = execFileSync('pgrep', ['-g', String(group)], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
  let pssKiB = 0;
  for (const pid of pids) {
    try {
      pssKiB += Number(/^Pss:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
    } catch {
      // Gone since it was listed.
    }
  }
  return { processes: pids.length, pssMiB: Math.round(pssKiB / 1024) };
}

/** Polls `probe` every POLL_MS until it holds; the time it took, or undefined past `timeoutMs`. */
async function timeUntil(probe: () => Promise<boolean>, timeoutMs: number): Promise<number | undefined> {
  const from = performance.now();
  while (performance.now() - from < timeoutMs) {
    if (await probe().catch(() => false)) return performance.now() - from;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return undefined;
}

/**
 * One call started as the app starts one: the start, then the user joins its room with the token
 * (when `users` is given). Timed on the media server's own clock, so neither the polling nor the
 * user's join is in it: the dispatch's creation to the agent participant's join.
 */
async function timedCall(
  stack: Stack,
  users: SimulatedUser[] | undefined,
  sessionId: string,
  timeoutMs: number,
): Promise<number | undefined> {
  await stack.service.postEvent({ session_id: sessionId, event: 'screen_state', screen: 'pan_details' });
  const started = await stack.service.startVoice(sessionId, 'pan_details');
  const room = started.media_room;
  const [listed, user] = await Promise.all([
    timeUntil(async () => (await agentsIn(stack.rooms, room)).length > 0, timeoutMs),
    users ? joinAsUser(started.media_url, started.token) : undefined,
  ]);
  if (user) users?.push(user);
  if (listed === undefined) return undefined;
  const [agent] = await agentsIn(stack.rooms, room);
  // The server also lists its own automatic dispatch of the room (no agent name): ours is named.
  const dispatch = (await stack.dispatches.listDispatch(room)).find(
    (each) => each.agentName === stack.service.agentName,
  );
  if (!agent || dispatch?.state === undefined) return undefined;
  return Number(agent.joinedAtMs) - Number(dispatch.state.createdAt / 1_000_000n);
}

const ms = (value: number | undefined): string =>
  value === undefined ? 'n/a' : `${Math.round(value).toLocaleString('en-US')} ms`;

/**
 * The voice start's latency (docs/reference/voice-agent.md, "Starting jobs fast"): the real LiveKit server, the
 * service and the agent worker at its defaults (the local voice, no provider key), `sequential`
 * calls one after another, then `burst` calls started at once. Each latency runs from the start's
 * answer to the agent listed in the room by the server.
 */
export async function agentStartSuite(options: { sequential: number; burst: number }) {
  // The target is for a two-core machine: the call's processes get every core (as local-voice).
  try {
    execFileSync('taskset', ['-a', '-p', '-c', `0-${cpus().length - 1}`, String(process.pid)], { stdio: 'ignore' });
  } catch {
    // No taskset: nothing was pinned.
  }
  const load = loadavg()[0]!;
  // The worker's default: a warm process for each job it takes (docs/reference/voice-agent.md, "Starting jobs fast").
  const idle = DEFAULT_AGENT_MAX_JOBS;
  const media = await startMediaStack({
    models: { reply: () => 'unused', transcript: () => 'unused' },
    // The worker's defaults, stated over the media tests' own (more jobs, two warm processes).
    worker: {
      MODEL_BASE_URL: '',
      MODEL_API_KEY: '',
      AGENT_MAX_JOBS: String(DEFAULT_AGENT_MAX_JOBS),
      AGENT_IDLE_PROCESSES: String(idle),
    },
  });
  const stack: Stack = Object.assign(media, {
    dispatches: new AgentDispatchClient(media.liveKit.url, media.liveKit.apiKey, media.liveKit.apiSecret),
  });
  const sequential: { listed: number; fetched: number }[] = [];
  const burst: number[] = [];
  const users: SimulatedUser[] = [];
  let missed = 0;
  try {
    // The first call meets a worker that has settled: its idle processes warm.
    await timeUntil(async () => stack.worker.readyProcesses() >= idle, 120_000);
    const settled = workerMemory(stack.worker.pid);
    for (let call = 0; call < options.sequential; call += 1) {
      const sessionId = `bench-start-${call}`;
      const before = await joinHistogram(stack);
      const listed = await timedCall(stack, users, sessionId, 15_000);
      await timeUntil(async () => (await joinHistogram(stack)).count > before.count, 15_000);
      const after = await joinHistogram(stack);
      if (listed === undefined || after.count !== before.count + 1) missed += 1;
      else sequential.push({ listed, fetched: (after.sum - before.sum) * 1000 });
      await stack.service.stopVoice(sessionId);
      for (const user of users.splice(0)) await user.leave();
      // One call after another, as a quiet hour brings them: the pool has replaced the process used.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
    // The burst comes after a quiet while: every process a call took has been replaced.
    await timeUntil(async () => stack.worker.readyProcesses() >= idle + options.sequential, 120_000);
    const before = await joinHistogram(stack);
    const listings = await Promise.all(
      Array.from({ length: options.burst }, (_, index) => timedCall(stack, undefined, `bench-burst-${index}`, 30_000)),
    );
    await timeUntil(async () => (await joinHistogram(stack)).count >= before.count + options.burst, 30_000);
    const after = await joinHistogram(stack);
    for (const listed of listings) {
      if (listed === undefined) missed += 1;
      else burst.push(listed);
    }
    const burstFetched = {
      joined: after.count - before.count,
      withinTwoSeconds: after.withinTwoSeconds - before.withinTwoSeconds,
      meanMs: ((after.sum - before.sum) / (after.count - before.count)) * 1000,
    };
    for (let index = 0; index < options.burst; index += 1)
      await stack.service.stopVoice(`bench-burst-${index}`).catch(() => undefined);
    for (const user of users.splice(0)) await user.leave();
    const sortedListed = sequential.map((call) => call.listed).sort((a, b) => a - b);
    const sortedFetched = sequential.map((call) => call.fetched).sort((a, b) => a - b);
    const sortedBurst = [...burst].sort((a, b) => a - b);
    const row = (label: string, sorted: number[], joined: number) =>
      `| ${label} | ${joined} | ${ms(percentile(sorted, 50))} | ${ms(percentile(sorted, 99))} | ${ms(sorted[0])} | ${ms(sorted.at(-1))} |`;
    const markdown = [
      '| calls: dispatch to | joined | p50 | p99 | fastest | slowest |',
      '|---|---|---|---|---|---|',
      row(`${options.sequential} one after another, the agent joined`, sortedListed, sequential.length),
      row(`${options.sequential} one after another, the agent's first context fetch`, sortedFetched, sequential.length),
      row(`${options.burst} at once, the agent joined`, sortedBurst, burst.length),
    ].join('\n');
    const own = [
      `Settled before the first call, the worker kept ${settled.processes} processes (itself, the framework's inference process`,
      `and ${idle} idle job processes) holding ${settled.pssMiB} MiB (the sum of their proportional set sizes).`,
      `The burst by the service's \`kyc_voice_agent_join_seconds\` (dispatch to the first context fetch): ${burstFetched.joined} of ${options.burst} joined,`,
      `${burstFetched.withinTwoSeconds} within 2 s, mean ${ms(burstFetched.meanMs)}.`,
      `Load average ${load.toFixed(1)} before, ${loadavg()[0]!.toFixed(1)} after, on ${cpus().length} cores.`,
    ].join(' ');
    const p99 = sortedListed.length > 0 ? percentile(sortedListed, 99) : undefined;
    const met =
      missed === 0 &&
      p99 !== undefined &&
      p99 <= 500 &&
      burst.length === options.burst &&
      (sortedBurst.at(-1) ?? Infinity) <= 2_000;
    return { markdown: `${markdown}\n\n${own}`, met, missed, workerLog: stack.worker.output() };
  } finally {
    for (const user of users) await user.leave().catch(() => undefined);
    await stack.stop();
    await dispose();
  }
}
