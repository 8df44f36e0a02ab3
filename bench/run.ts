/**
 * `npm run bench [-- --quick]`: the service measured against bare baselines in one run, on the
 * same machine, interleaved. Ratios are the result; absolute numbers on a shared machine are noise.
 * Writes the tables to stdout and to BENCHMARKS.md.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { CPU_SETS, describeCpuSets, moveToLoadCores } from './lib/cpu-sets.js';
import { pinnedVerdict } from './lib/pinned-targets.js';
import { PINNED_GENERATOR } from './lib/processes.js';
import { activityActorSuite } from './suites/activity-actor.js';
import { agentStartSuite } from './suites/agent-start.js';
import { clusterSuite } from './suites/cluster.js';
import { endpointsSuite } from './suites/endpoints.js';
import { fanoutSuite } from './suites/fanout.js';
import { fieldIngestionSuite } from './suites/field-ingestion.js';
import { idleSessionsSuite } from './suites/idle-sessions.js';
import { journalApplySuite } from './suites/journal-apply.js';
import { localVoiceSuite } from './suites/local-voice.js';
import { promotionSuite } from './suites/promotion.js';
import { ingestionSuite } from './suites/ingestion.js';
import { redactionSuite } from './suites/redaction.js';
import { requestCostSuite } from './suites/request-cost.js';
import { restartSuite } from './suites/restart.js';
import { ONE_EVENT_HEAP_TARGET_BYTES, sessionMemorySuite } from './suites/session-memory.js';
import { sessionScaleSuite } from './suites/session-scale.js';
import { soakSuite } from './suites/soak.js';
import { stepSuite } from './suites/step.js';
import { storeCostSuite } from './suites/store-cost.js';

const quick = process.argv.includes('--quick');
/** `--callgrind` adds instruction counts to the redaction suite (valgrind; minutes). */
const callgrind = process.argv.includes('--callgrind');
/**
 * `--only=<suites>` runs a subset and leaves BENCHMARKS.md as it is; the suites are step, session-memory,
 * activity-actor, ingestion, field-ingestion, promotion, request-cost, redaction, scale, scale-sqlite,
 * idle-sessions, journal-apply, store-cost, restart, fanout and endpoints.
 * `--only=soak` (15 minutes; never part of a full run) looks for leaks under a steady load.
 * `--only=cluster` (never part of a full run: it needs redis-server, and installs the Restate
 * server on first use) measures SESSION_HOST=restate against the same Restate server's ceilings.
 * `--only=local-voice` (never part of a full run: it needs the LiveKit server, espeak-ng, sox and
 * pocketsphinx, as `npm run test:media`) measures the local voice's reply latency.
 * `--only=agent-start` (never part of a full run, for the same reason) measures the voice start:
 * the start's answer to the agent in the room, calls one after another and a burst.
 */
const onlyArgument = process.argv.find((arg) => arg.startsWith('--only='));
const only = onlyArgument ? new Set(onlyArgument.slice('--only='.length).split(',')) : undefined;
const ON_DEMAND = new Set(['soak', 'cluster', 'local-voice', 'agent-start']);
const runs = (suite: string) => (!only && !ON_DEMAND.has(suite)) || (only?.has(suite) ?? false);

const settings = quick
  ? {
      rounds: 1,
      ingestionRounds: 1,
      warmup: 1,
      duration: 2,
      scaleDuration: 1,
      counts: [1_000, 5_000],
      hibernate: 1,
      fanoutSeconds: 2,
      endpointDuration: 1,
      endpointSessions: 100,
      restartSessions: 10_000,
    }
  : {
      rounds: 3,
      ingestionRounds: 5,
      warmup: 3,
      duration: 4,
      scaleDuration: 2,
      counts: [1_000, 10_000, 100_000],
      hibernate: 5,
      fanoutSeconds: 10,
      endpointDuration: 3,
      endpointSessions: 1_000,
      restartSessions: 100_000,
    };

const RESULTS_START = '<!-- results:start -->';
const RESULTS_END = '<!-- results:end -->';

async function main(): Promise<void> {
  const started = Date.now();
  // The runner, its in-process suites and the load worker keep off the servers' cores.
  moveToLoadCores(process.pid);
  execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
  const sections: string[] = [];
  let suiteStarted = Date.now();
  const took = () => {
    const seconds = (Date.now() - suiteStarted) / 1000;
    suiteStarted = Date.now();
    return `\n\nThis part took ${seconds.toFixed(0)} s.`;
  };
  const say = (text: string) => {
    process.stdout.write(`${text}\n\n`);
    sections.push(text);
  };

  say(
    `Run ${new Date().toISOString()} on ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, ` +
      `${quick ? 'quick mode' : 'full mode'}. ${describeCpuSets(PINNED_GENERATOR)}`,
  );

  if (runs('step')) {
    suiteStarted = Date.now();
    const step = await stepSuite({
      rows: quick
        ? [{ sessions: 1 }, { sessions: 1_000 }]
        : [
            { sessions: 1 },
            { sessions: 1_000 },
            { sessions: 100_000, active: 1_000 },
            { sessions: 100_000 },
            { sessions: 1_000, field: true },
          ],
      count: quick ? 20_000 : 50_000,
      rounds: quick ? 1 : 3,
    });
    say(
      `### Ingest step: \`supervisor.ask\` of \`session.ingest\` in process, no HTTP (${quick ? 1 : 3} interleaved ` +
        `rounds, median)\n\n${step.markdown}\n\nTargets: under 50 µs and 4 KB allocated per event. ${step.guard}${took()}`,
    );
  }

  if (runs('session-memory')) {
    suiteStarted = Date.now();
    const sessions = quick ? 2_000 : 10_000;
    const memory = await sessionMemorySuite({ sessions });
    say(
      `### Session memory: the budget's estimate against the heap (${sessions.toLocaleString('en-US')} running ` +
        `sessions of each shape, SQLite, heap after a full collection)\n\n${memory.markdown}\n\nThe estimate must ` +
        `not be below the heap (src/actor-system/memory-budget.ts; docs/reference/limits.md): lowest estimate ` +
        `/ heap ${memory.lowestRatio.toFixed(2)} ${memory.lowestRatio >= 1 ? '(met)' : '(missed)'}. A one-event ` +
        `session's heap: ${memory.oneEventHeap.toLocaleString('en-US')} B against a target of ` +
        `${ONE_EVENT_HEAP_TARGET_BYTES.toLocaleString('en-US')} B ` +
        `${memory.oneEventHeap <= ONE_EVENT_HEAP_TARGET_BYTES ? '(met)' : '(missed)'}.${took()}`,
    );
  }

  if (runs('activity-actor')) {
    suiteStarted = Date.now();
    const actor = await activityActorSuite({ items: quick ? 200_000 : 2_000_000, rounds: settings.rounds });
    say(
      `### Activity actor: the live path per committed item, in process (${settings.rounds} rounds, median)\n\n${actor.markdown}\n\nWhat ` +
        `the actor adds: ${actor.addedNs.toFixed(0)} ns per item (docs/explanation/activity-actor.md, "What it ` +
        `costs").${took()}`,
    );
  }

  if (runs('ingestion')) {
    suiteStarted = Date.now();
    const ingestion = await ingestionSuite({
      rounds: settings.ingestionRounds,
      warmupSeconds: settings.warmup,
      durationSeconds: settings.duration,
      connections: 50,
      sessions: 1_000,
      sessionsHeld: settings.counts.at(-1)!,
    });
    const held = settings.counts.at(-1)!.toLocaleString('en-US');
    const unpinned =
      `Target: service (LOG_LEVEL=warn, which logs nothing per request, as bare express) ≥ 0.85 × bare express ` +
      `→ ${ingestion.serviceOverExpress.toFixed(2)} ${ingestion.serviceOverExpress >= 0.85 ? '(met)' : '(missed)'}; ` +
      `STORE=sqlite → ${ingestion.sqliteOverExpress.toFixed(2)} (unpinned, so flattered).`;
    // A tripped guard still prints the table it judged: a slower run is the one whose numbers are needed.
    let guard: Error | undefined;
    let verdict = unpinned;
    if (CPU_SETS) {
      try {
        verdict = pinnedVerdict(CPU_SETS, ingestion);
      } catch (error) {
        guard = error instanceof Error ? error : new Error(String(error));
        verdict = `${guard.message}.`;
      }
    }
    say(
      `### Ingestion: POST /v1/events (50 connections, ${settings.duration} s × ${settings.ingestionRounds} ` +
        `interleaved rounds, median)\n\n${ingestion.markdown}\n\n` +
        `${verdict} Holding ${held} sessions → ${ingestion.heldOverExpress.toFixed(2)} (memory) and ${ingestion.sqliteHeldOverExpress.toFixed(2)} ` +
        `(SQLite) × bare express. ` +
        `STORE=sqlite (every answer after its batch is committed) → ${ingestion.sqliteOverMemory.toFixed(2)} × ` +
        `STORE=memory, ${ingestion.sqliteOverBareSqlite.toFixed(2)} × bare express keeping each event in SQLite ` +
        `(itself ${ingestion.bareSqliteOverExpress.toFixed(2)} × bare express). ` +
        `Target: the HTTP layer alone (the service with the session step skipped) within 10% of bare express → ` +
        `${ingestion.httpLayerOverExpress.toFixed(2)} ${ingestion.httpLayerOverExpress >= 0.9 ? '(met)' : '(missed)'}${took()}`,
    );
    if (guard !== undefined) throw guard;
  }

  if (runs('field-ingestion')) {
    suiteStarted = Date.now();
    const field = await fieldIngestionSuite({
      rounds: settings.ingestionRounds,
      warmupSeconds: settings.warmup,
      durationSeconds: settings.duration,
      connections: 50,
      sessions: 1_000,
    });
    say(
      `### Ingestion over field sessions: POST /v1/events to sessions holding 14 screen schemas and 12 typed ` +
        `fields (about 17 KB of state; 50 connections, ${settings.duration} s × ${settings.ingestionRounds} interleaved ` +
        `rounds, median)\n\n${field.markdown}\n\nThe same event as the ingestion suite's; the sessions hold what ` +
        `a deployed SDK's session holds after its start (docs/decisions/0013-schemas-and-hints-beside-the-state.md). ` +
        `STORE=memory → ${field.memoryOverExpress.toFixed(2)} × bare express, STORE=sqlite → ${field.sqliteOverExpress.toFixed(2)}.${took()}`,
    );
  }

  if (runs('promotion')) {
    suiteStarted = Date.now();
    const promotion = await promotionSuite({
      warmupSeconds: settings.warmup,
      durationSeconds: settings.duration + 1,
      connections: 50,
      sessions: 1_000,
    });
    say(
      `### Young-generation collections under the ingestion load: POST /v1/events (50 connections, 1,000 sessions, ` +
        `${settings.duration + 1} s, \`--trace-gc-nvp\`)\n\n${promotion.markdown}\n\nWhat outlives a scavenge ` +
        `is copied and then promoted; a request the server still reaches after it answers makes both grow ` +
        `(docs/decisions/0014-nothing-outlives-the-young-generation.md). ` +
        `${promotion.guard}${took()}`,
    );
  }

  if (runs('request-cost')) {
    suiteStarted = Date.now();
    const cost = await requestCostSuite({
      warmupSeconds: settings.warmup,
      durationSeconds: quick ? 3 : 8,
      connections: 50,
      sessions: 1_000,
    });
    say(
      `### Where a request goes: POST /v1/events part by part (CPU profile under load, 50 connections, 1,000 ` +
        `sessions)\n\n${cost.markdown}\n\nSelf time of each part's own code, main thread, sampled every 100 µs ` +
        `over ${quick ? 3 : 8} s after ${settings.warmup} s of warm-up; the profile's clock is wall time, so on ` +
        `a busy machine the parts rank rather than add up to the CPU read from /proc.${took()}`,
    );
  }

  if (runs('redaction')) {
    suiteStarted = Date.now();
    const redaction = await redactionSuite({ count: quick ? 20_000 : 100_000, rounds: quick ? 1 : 3, callgrind });
    say(
      `### Redaction pass: cost per event (in process, ${quick ? 1 : 3} interleaved rounds` +
        `${callgrind ? '; instructions by callgrind, 7,000 minus 2,000 events' : ''})\n\n${redaction.markdown}\n\n` +
        `The pass is ${(100 * redaction.passShareOfIngest).toFixed(0)}% of the in-process ingest of the bench ` +
        `event${callgrind ? ' (instructions)' : ' (wall time)'}; over HTTP, which adds express, JSON and the socket, ` +
        `its share is smaller (git show d1df1cf:docs/benchmark-history.md: Redaction).${took()}`,
    );
  }

  if (runs('scale')) {
    suiteStarted = Date.now();
    const scale = await sessionScaleSuite({
      counts: settings.counts,
      durationSeconds: settings.scaleDuration,
      rounds: quick ? 1 : 4,
      connections: 50,
      activeSessions: 1_000,
      hibernateSeconds: settings.hibernate,
      store: 'memory',
    });
    const last = scale.rows.at(-1)!;
    const first = scale.rows[0]!;
    const throughputRatio = last.rps / first.rps;
    say(
      `### Session scale (LOG_LEVEL=warn, SESSION_HIBERNATE_SECONDS=${settings.hibernate}, 50 connections, median ` +
        `of ${quick ? 1 : 4})\n\n${scale.markdown}\n\n` +
        `Targets: throughput at ${last.sessions.toLocaleString('en-US')} within 10% of ${first.sessions.toLocaleString('en-US')} ` +
        `→ ${throughputRatio.toFixed(2)} ${throughputRatio >= 0.9 ? '(met)' : '(missed)'}; ` +
        `under 8 KiB RSS per idle session → ${(last.bytesPerIdleSession / 1024).toFixed(1)} KiB ` +
        `${last.bytesPerIdleSession < 8 * 1024 ? '(met)' : '(missed)'}${took()}`,
    );
  }

  if (runs('scale-sqlite')) {
    suiteStarted = Date.now();
    const scale = await sessionScaleSuite({
      counts: settings.counts,
      durationSeconds: settings.scaleDuration,
      rounds: quick ? 1 : 2,
      connections: 50,
      activeSessions: 1_000,
      hibernateSeconds: settings.hibernate,
      store: 'sqlite',
    });
    say(
      `### Session scale, STORE=sqlite (LOG_LEVEL=warn, SESSION_HIBERNATE_SECONDS=${settings.hibernate}, 50 ` +
        `connections, median of ${quick ? 1 : 2})\n\n${scale.markdown}\n\n` +
        `A hibernated session lives only in the database file, so an idle session costs the process next to nothing${took()}`,
    );
  }

  if (runs('idle-sessions')) {
    suiteStarted = Date.now();
    const idle = await idleSessionsSuite({
      sessions: quick ? 5_000 : 50_000,
      beforeSeconds: 20,
      afterSeconds: 60,
      hibernateSeconds: settings.hibernate,
    });
    const kib = idle.bytesPerIdleSession / 1024;
    say(
      `### Idle sessions: settled RSS, STORE=sqlite (${quick ? '5,000' : '50,000'} sessions of one event, SESSION_HIBERNATE_SECONDS=${settings.hibernate}, ` +
        `lowest RSS over 20 s of light traffic before and 60 s after, nothing forced)\n\n${idle.markdown}\n\n` +
        `Target: at most 1.5 KiB of settled RSS per idle session → ${kib.toFixed(2)} KiB ${kib <= 1.5 ? '(met)' : '(missed)'}` +
        `${quick ? " (a quick run divides the baseline's noise by too few sessions to judge)" : ''}${took()}`,
    );
  }

  if (runs('journal-apply')) {
    suiteStarted = Date.now();
    const apply = await journalApplySuite({
      sizes: quick ? [100_000, 300_000] : [100_000, 1_000_000],
      held: quick ? 10_000 : 100_000,
      batches: quick ? 5 : 20,
    });
    say(
      `### The SQLite journal's apply as the activity log grows and as sessions are held (in process, 1,000 sessions active)\n\n${apply.markdown}\n\n` +
        `Target: flat with the log (its largest size within 1.5× of its smallest) → ${apply.growth.toFixed(2)}× ` +
        `${apply.growth <= 1.5 ? '(met)' : '(missed)'}; ` +
        `flat with the sessions held (within 1.5× of 1,000 held) → ${apply.heldGrowth.toFixed(2)}× ` +
        `${apply.heldGrowth <= 1.5 ? '(met)' : '(missed)'}${took()}`,
    );
  }

  if (runs('store-cost')) {
    suiteStarted = Date.now();
    const cost = await storeCostSuite({ rounds: quick ? 3 : 12, block: 4_000 });
    say(
      '### The SQLite store per ingested event, in process ' +
        `(1,000 sessions, 25 events a commit, one core; BENCH_AGAINST beside it)\n\n${cost.markdown}${took()}`,
    );
  }

  if (runs('restart')) {
    suiteStarted = Date.now();
    const restart = await restartSuite({ sessions: settings.restartSessions });
    say(`### Restart after kill -9 with sessions held (STORE=sqlite)\n\n${restart.markdown}${took()}`);
  }

  if (runs('fanout')) {
    suiteStarted = Date.now();
    const fanout = await fanoutSuite({
      clients: 1_000,
      workers: 4,
      eventsPerSecond: 20,
      seconds: settings.fanoutSeconds,
    });
    say(
      `### Stream fan-out: 1,000 SSE clients in 4 worker processes, events posted at a fixed rate for ${settings.fanoutSeconds} s\n\n${fanout.markdown}\n\n` +
        `Latency is from an item's recording (its timestamp) to its receipt by a reader. Target: p99 under 100 ` +
        `ms → ${fanout.p99} ms ${fanout.p99 < 100 ? '(met)' : '(missed)'}${took()}`,
    );
  }

  if (runs('cluster')) {
    suiteStarted = Date.now();
    const cluster = await clusterSuite({
      rounds: settings.rounds,
      warmupSeconds: settings.warmup,
      durationSeconds: settings.duration,
      connections: 50,
      sessions: 1_000,
      processCounts: [1, 2],
    });
    say(
      `### Cluster mode against Restate's own ceiling (50 connections, 1,000 sessions, ` +
        `${settings.duration} s × ${settings.rounds} interleaved rounds, median; BENCHMARKS.md, "Cluster mode")\n\n` +
        `${cluster.markdown}\n\n` +
        `${cluster.ratios}\n\n` +
        `Journal entries per event (Restate's \`sys_journal\`, 2,000 events per load, one process):\n\n${cluster.journal}\n\n` +
        `${cluster.placement} Load average (1 / 5 / 15 min): ${cluster.load}.${took()}`,
    );
  }

  if (runs('endpoints')) {
    suiteStarted = Date.now();
    const endpoints = await endpointsSuite({
      rounds: settings.rounds,
      warmupSeconds: quick ? 0.5 : settings.warmup,
      durationSeconds: settings.endpointDuration,
      connections: 50,
      sessions: settings.endpointSessions,
    });
    say(
      `### Trigger evaluation and context fetch (LOG_LEVEL=warn, 50 connections, ${settings.endpointSessions.toLocaleString('en-US')} ` +
        `sessions, median of ${settings.rounds})\n\n${endpoints.markdown}${took()}`,
    );
  }

  if (runs('local-voice')) {
    suiteStarted = Date.now();
    const turns = quick ? 5 : 20;
    const voice = await localVoiceSuite({ turns });
    say(
      `### Local voice: end of the user's speech to the first audible frame of the answer ` +
        `(real LiveKit server, no provider key: pocketsphinx, the scripted dialog, espeak-ng; ${turns} spoken requests)` +
        `\n\n${voice.markdown}\n\nTarget: p50 at most 1,200 ms on 2 cores ${voice.met ? '(met)' : '(missed)'}` +
        `${voice.notHeard > 0 ? `; ${voice.notHeard} requests got no audible answer within 20 s` : ''}.${took()}`,
    );
  }

  if (runs('agent-start')) {
    suiteStarted = Date.now();
    const sequential = quick ? 5 : 20;
    const start = await agentStartSuite({ sequential, burst: 8 });
    if (process.env.BENCH_AGENT_LOG) writeFileSync(process.env.BENCH_AGENT_LOG, start.workerLog);
    const heading =
      '### Voice start: the dispatch to the agent in the room (real LiveKit server, the agent worker at its defaults, the local voice)';
    const target = `Target: p99 at most 500 ms one after another, and all 8 of a burst within 2 s, on 2 cores ${start.met ? '(met)' : '(missed)'}.`;
    say(`${heading}\n\n${start.markdown}\n\n${target}${took()}`);
  }

  if (runs('soak')) {
    suiteStarted = Date.now();
    const minutes = quick ? 1 : 15;
    const soak = await soakSuite({ minutes, sessions: 5_000, requestsPerSecond: 200, sliceSeconds: quick ? 20 : 60 });
    say(
      `### Soak: ${minutes} min at 200 req/s over 5,000 sessions, half the events stuffed with 30 KB unknown ` +
        `fields (LOG_LEVEL=warn)\n\n${soak.markdown}${took()}`,
    );
  }

  say(`Total bench time: ${((Date.now() - started) / 1000).toFixed(0)} s.`);
  if (!only) writeResults(sections.join('\n\n'));
}

/** Replaces the results block of BENCHMARKS.md, keeping the hand-written notes around it. */
function writeResults(results: string): void {
  const path = 'BENCHMARKS.md';
  let document: string;
  try {
    document = readFileSync(path, 'utf8');
  } catch {
    document = `# Benchmarks\n\n${RESULTS_START}\n${RESULTS_END}\n`;
  }
  const start = document.indexOf(RESULTS_START);
  const end = document.indexOf(RESULTS_END);
  const block = `${RESULTS_START}\n${results}\n${RESULTS_END}`;
  document =
    start >= 0 && end > start
      ? document.slice(0, start) + block + document.slice(end + RESULTS_END.length)
      : `${document}\n${block}\n`;
  writeFileSync(path, document);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
