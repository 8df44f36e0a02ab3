/**
 * `npx tsx bench/cluster-cpu.ts`: CPU time per event, per process, for cluster ingestion and for
 * the Restate one-way ceiling on the same server (BENCHMARKS.md, "Cluster mode"). A rate measured
 * while other work shares the cores is noise; what each event costs each process (user + system
 * time from /proc, before and after a fixed number of events, the backlog run included) holds up
 * much better. Needs `npm run build` first (the cluster runs the built service).
 *
 * EVENTS (default 5,000, over SESSIONS sessions, 1,000 by default, 50 connections), TARGETS (`one-way ceiling` and
 * `ingestion` by default; also `one-way + two state writes`, `one-way large state`, `one-way after
 * a wait`, `one-way after busy work`: bench/lib/ceiling-object.ts; `trigger evaluate`, a call; comma-separated), CEILING_VIA_PROXY=1 (the ceiling's
 * endpoint behind a connection round-robin, as the service's is), RATE=<events/s> (every target sent
 * at that rate: Restate's cost per event depends on how long a run keeps it busy), BUSY_WORK_MS (the
 * CPU the busy-work step spends, 2.5 by default), FRONTS=1 (events sent to a front, docs/explanation/cluster.md
 * "Fronts"), FIELD_SESSIONS=1 (sessions holding a deployed SDK's state first), PROFILE=<file>: a V8 CPU profile of the service
 * process while it ingests, or runs PROFILE_TARGET (open it in Chrome's DevTools). It also prints what each process burns
 * idle and, per target, per second of the run (BENCHMARKS.md, "CPU per event"), and the read and write
 * system calls each process made per event.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalCluster } from '../scripts/cluster/local-cluster.js';
import type { Proxy } from '../scripts/cluster/round-robin.js';
import { tcpRoundRobin } from '../scripts/cluster/round-robin.js';
import { freePort, startRedis } from '../scripts/cluster/redis-server.js';
import { SESSION_OBJECT } from '../src/cluster/session-object.js';
import { CEILING_OBJECT } from './lib/ceiling-object.js';
import type { InspectorSession } from './lib/inspector.js';
import { openInspector } from './lib/inspector.js';
import { cpuSeconds, ioSyscalls, runLoad } from './lib/processes.js';
import { seedFieldSessions } from './lib/session-setup.js';
import { drained as backlogRun, startCeiling } from './suites/cluster.js';

const EVENTS = Number(process.env.EVENTS ?? 5000);
/** SESSIONS: how many sessions the events go to, at random (1,000 by default; 10 makes bursts: 5 of the 50 connections' events in flight per session). */
const SESSIONS = Number(process.env.SESSIONS ?? 1000);
const PROFILE = process.env.PROFILE;
/** PROFILE_TARGET: the target the profile is taken of (ingestion by default). */
const PROFILE_TARGET = process.env.PROFILE_TARGET ?? 'ingestion';
const IDLE_MS = 5000;
/** RATE=<events/s>: each target sent at that rate rather than as fast as it is answered. */
const RATE = process.env.RATE ? Number(process.env.RATE) : undefined;
/** FRONTS=1: clients go to a process that serves the HTTP API only (CLUSTER_ROLE=front), the service process only runs invocations. */
const FRONTS = Number(process.env.FRONTS ?? 0);
/** FIELD_SESSIONS=1: every session first gets a deployed SDK's state (14 schemas, 12 typed fields: about 17 KB), as real sessions hold. */
const FIELD_SESSIONS = process.env.FIELD_SESSIONS === '1';

async function main(): Promise<void> {
  const redis = await startRedis({ dir: mkdtempSync(join(tmpdir(), 'cpu-redis-')) });
  const inspectPort = await freePort();
  const cluster = await startLocalCluster({
    redisUrl: redis.url,
    processes: 1,
    fronts: FRONTS,
    built: true,
    env: PROFILE ? { NODE_OPTIONS: `--inspect=127.0.0.1:${inspectPort}` } : {},
  });
  const ceiling = await startCeiling();
  let proxied: Proxy | undefined;
  try {
    // CEILING_VIA_PROXY=1: the ceiling's endpoint behind the same connection round-robin as the service's.
    proxied = process.env.CEILING_VIA_PROXY ? await tcpRoundRobin([ceiling.port], await freePort()) : undefined;
    await cluster.restate.register(`http://127.0.0.1:${proxied ? proxied.port : ceiling.port}/`);
    const service = cluster.processes[0]!;
    // local-cluster runs the endpoints' connection round-robin in this process.
    const front = cluster.fronts[0];
    const pids: Record<string, number> = {
      service: service.pid,
      ...(front ? { front: front.pid } : {}),
      restate: cluster.restate.pid,
      redis: redis.pid,
      'ceiling endpoint': ceiling.pid,
      'endpoint proxy': process.pid,
    };
    // Where clients go: the front when there is one (FRONTS=1), the service process only runs invocations then.
    const clientUrl = `http://127.0.0.1:${(front ?? service).port}`;
    const drained = () => backlogRun((sql) => cluster.restate.query<{ n: number }>(sql));
    const ingress = cluster.restate.ingressUrl.replace(/\/$/, '');
    const common = {
      connections: 50,
      sessions: SESSIONS,
      body: 'event' as const,
      method: 'POST' as const,
      ...(RATE ? { overallRate: RATE } : {}),
    };
    const jobs = {
      'one-way ceiling': { ...common, url: ingress, path: `/${CEILING_OBJECT}/{session}/step/send` },
      'one-way + two state writes': {
        ...common,
        url: ingress,
        path: `/${CEILING_OBJECT}/{session}/stepAndTwoWrites/send`,
      },
      'one-way large state': { ...common, url: ingress, path: `/${CEILING_OBJECT}/{session}/stepLargeState/send` },
      'one-way after a wait': { ...common, url: ingress, path: `/${CEILING_OBJECT}/{session}/stepAfterAWait/send` },
      'one-way after busy work': {
        ...common,
        url: ingress,
        path: `/${CEILING_OBJECT}/{session}/stepAfterBusyWork/send`,
      },
      // To the front when there is one (FRONTS=1): the service process then only runs invocations.
      ingestion: { ...common, url: clientUrl, path: '/v1/events' },
      // What the front sends Restate, sent there directly: the session handler's cost without the front's.
      // A call: answered with the session's decision, through the session's `ask`.
      'trigger evaluate': {
        ...common,
        url: clientUrl,
        path: '/v1/assistant/trigger/evaluate',
        body: 'trigger' as const,
      },
      'ingestion sent to Restate directly': {
        ...common,
        url: ingress,
        path: `/${SESSION_OBJECT}/{session}/ingest/send`,
        body: 'ingest command' as const,
      },
    };
    const targets = (process.env.TARGETS ?? 'one-way ceiling,ingestion').split(',') as (keyof typeof jobs)[];
    if (FIELD_SESSIONS) await seedFieldSessions(clientUrl, SESSIONS);
    // Every session exists, and both paths are warm, before anything is counted.
    await runLoad({
      ...jobs.ingestion,
      connections: Math.min(jobs.ingestion.connections, SESSIONS),
      amount: SESSIONS,
      sequential: true,
    });
    for (const target of targets) {
      await runLoad({ ...jobs[target], amount: 2000 });
      await drained();
    }
    // What each process burns with nothing to do: a cost of time, not of events.
    const cpuNow = () => Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid)]));
    const idleBefore = cpuNow();
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    console.log(
      `idle ${IDLE_MS / 1000} s, CPU ms per second: ${Object.entries(pids)
        .map(
          ([name, pid]) => `${name} ${((1000 * (cpuSeconds(pid) - idleBefore[name]!)) / (IDLE_MS / 1000)).toFixed(1)}`,
        )
        .join(', ')}`,
    );
    for (const target of targets) {
      const before = cpuNow();
      const syscallsBefore = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, ioSyscalls(pid)]));
      const started = performance.now();
      let profiler: InspectorSession | undefined;
      if (PROFILE && target === PROFILE_TARGET) {
        profiler = await openInspector(`127.0.0.1:${inspectPort}`);
        await profiler.call('Profiler.enable');
        await profiler.call('Profiler.setSamplingInterval', { interval: 200 });
        await profiler.call('Profiler.start');
      }
      const result = await runLoad({ ...jobs[target], amount: EVENTS });
      await drained();
      if (profiler) {
        const { profile } = await profiler.call<{ profile: unknown }>('Profiler.stop');
        writeFileSync(PROFILE!, JSON.stringify(profile));
        profiler.close();
      }
      const seconds = (performance.now() - started) / 1000;
      const spent = Object.entries(pids).map(
        ([name, pid]) => [name, (1000 * (cpuSeconds(pid) - before[name]!)) / EVENTS] as const,
      );
      const total = spent.reduce((sum, [, ms]) => sum + ms, 0);
      const perSecond = (ms: number) => ((ms * EVENTS) / seconds).toFixed(0);
      console.log(
        `${target}: ${EVENTS} events in ${seconds.toFixed(1)} s, backlog included ` +
          `(sent at ${result.requestsPerSecond.toFixed(0)}/s, p50 ${result.latencyP50} ms, failed ${result.errors + result.non2xx}); ` +
          `CPU ms per event: ${spent.map(([name, ms]) => `${name} ${ms.toFixed(3)}`).join(', ')}; total ${total.toFixed(3)}; ` +
          `CPU ms per second: ${spent.map(([name, ms]) => `${name} ${perSecond(ms)}`).join(', ')}; load average ${loadavg()[0]!.toFixed(2)}`,
      );
      // Unlike CPU time, a count the machine's other work does not move: what batching saves shows here first.
      console.log(
        `${target}: read + write system calls per event: ${Object.entries(pids)
          .map(([name, pid]) => `${name} ${((ioSyscalls(pid) - syscallsBefore[name]!) / EVENTS).toFixed(2)}`)
          .join(', ')}`,
      );
    }
    const sizes = await cluster.restate.query<{ key: string; n: number; bytes: number }>(
      // What each object keeps, for comparing what Restate stores per invocation.
      `SELECT service_name || '.' || key AS key, count(*) AS n, avg(length(encode(value, 'hex')) / 2) AS bytes FROM state GROUP BY service_name, key`,
    );
    const invocations = await cluster.restate.query<{ target: string; status: string; n: number }>(
      `SELECT target_service_name || '/' || target_handler_name AS target, status, count(*) AS n FROM sys_invocation ` +
        'GROUP BY target_service_name, target_handler_name, status',
    );
    console.log(
      `invocations Restate still holds: ${invocations.map((row) => `${row.target} ${row.status} ${row.n}`).join(', ')}`,
    );
    console.log(
      `kept state, mean bytes per value: ${sizes.map((row) => `${row.key} ${Math.round(Number(row.bytes))} (${row.n})`).join(', ')}`,
    );
  } finally {
    await proxied?.close();
    await ceiling.stop();
    await cluster.stop();
    await redis.stop();
  }
  process.exit(0);
}

void main();
