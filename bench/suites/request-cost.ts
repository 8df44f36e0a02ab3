import type { CallFrame, CpuProfile } from '../lib/cpu-profile.js';
import { selfTimeByPart, topFunctions } from '../lib/cpu-profile.js';
import { openInspector } from '../lib/inspector.js';
import type { ServerProcess } from '../lib/processes.js';
import { cpuSeconds, freePort, runLoad, threadCpuSeconds } from '../lib/processes.js';
import { round, table } from '../lib/stats.js';
import { startBareExpress, startService } from '../lib/targets.js';

export interface RequestCostOptions {
  warmupSeconds: number;
  durationSeconds: number;
  connections: number;
  sessions: number;
}

const from = (pattern: RegExp) => (frame: CallFrame) => pattern.test(frame.url);
/** A pattern source matching code in any of the packages `names` lists (space-separated). */
const inPackages = (names: string) => `node_modules/(${names.split(' ').join('|')})/`;

/** The methods of node:sqlite's `DatabaseSync` and `StatementSync` the store calls. */
const SQLITE_NATIVE = new Set(['run', 'all', 'get', 'iterate', 'exec', 'prepare', 'setReadBigInts', 'setReturnArrays']);

/**
 * The parts of a request, first match wins. Code is assigned by the module it is in: what a
 * middleware costs is its own functions' time (the functions it calls in other parts count there).
 */
const PARTS: { part: string; matches: (frame: CallFrame) => boolean }[] = [
  { part: 'idle', matches: (frame) => frame.functionName === '(idle)' },
  { part: 'garbage collection', matches: (frame) => frame.functionName === '(garbage collector)' },
  {
    part: 'redaction pass',
    matches: from(/\/src\/(domain\/event-redaction|privacy\/[\w-]+)\.js|node_modules\/re2js\//),
  },
  {
    part: "the SQLite store's own code (group commit, the journal, its statements' arguments, checkpoints)",
    matches: from(/\/src\/store\/(sqlite-[\w-]+|wal-checkpointer|session-fields)\.js/),
  },
  // node:sqlite's statements run natively: their frames have no script, only the method's name.
  {
    part: 'SQLite itself (node:sqlite statements and transactions, native)',
    matches: (frame) => frame.url === '' && SQLITE_NATIVE.has(frame.functionName),
  },
  {
    part: 'the session step (XState, the session machine, session host, use cases, activity, store, step metrics)',
    matches: from(
      /node_modules\/xstate\/|\/src\/(actor-system|machines|store|metrics|domain|use-cases)\/|\/src\/integrations\/clock\.js/,
    ),
  },
  { part: 'validation (zod)', matches: from(/node_modules\/zod\/|\/src\/http\/validate\.js/) },
  {
    part: 'request id, request log, HTTP metrics',
    matches: from(
      /\/src\/http\/(middleware\/(correlation|request-log|http-metrics)|request-context)\.js|node_modules\/prom-client\//,
    ),
  },
  {
    part: 'body reading, JSON parse, depth check',
    matches: from(
      new RegExp(
        `/src/http/(middleware/json-body|body-depth)\\.js|${inPackages(
          'body-parser raw-body type-is content-type media-typer mime-types iconv-lite bytes unpipe destroy',
        )}`,
      ),
    ),
  },
  {
    part: 'the answer (res.json, or the direct write)',
    matches: from(/node_modules\/express\/lib\/response\.js|\/src\/http\/send-json\.js/),
  },
  {
    part: "routing: express's app and router, gates, the route's own code",
    matches: from(
      new RegExp(
        `${inPackages(
          'express router path-to-regexp parseurl finalhandler on-finished ee-first debug depd encodeurl ' +
            'escape-html statuses http-errors setprototypeof',
        )}|/src/http/|/bench/servers/`,
      ),
    ),
  },
  {
    part: "Node's HTTP parser and response, streams, socket writes",
    matches: (frame) => frame.url.startsWith('node:') || (frame.url === '' && !frame.functionName.startsWith('(')),
  },
  { part: 'other', matches: () => true },
];

const partOf = (frame: CallFrame): string => PARTS.find((candidate) => candidate.matches(frame))!.part;

interface Measured {
  requests: number;
  cpuMicrosPerRequest: number;
  parts: Map<string, number>;
  /** The functions with the most self time, µs over the run. */
  top: { place: string; micros: number }[];
  /** CPU per request (µs, /proc) of the process's threads, by thread name. */
  threads: Map<string, number>;
}

/** Functions listed of the SQLite run: enough to show where its extra cost over the memory store sits. */
const TOP_FUNCTIONS = 15;

/** Loads a target started with `--inspect`, sampling its CPU profile over the measured run only (not start-up or warm-up). */
async function profiled(
  start: (nodeOptions: string[]) => Promise<ServerProcess>,
  options: RequestCostOptions,
): Promise<Measured> {
  const inspector = `127.0.0.1:${await freePort()}`;
  const server = await start([`--inspect=${inspector}`]);
  try {
    const job = {
      url: server.url,
      method: 'POST' as const,
      path: '/v1/events',
      connections: options.connections,
      sessions: options.sessions,
      body: 'event' as const,
    };
    await runLoad({ ...job, durationSeconds: options.warmupSeconds });
    const session = await openInspector(inspector);
    try {
      await session.call('Profiler.enable');
      await session.call('Profiler.setSamplingInterval', { interval: 100 });
      await session.call('Profiler.start');
      const cpuBefore = cpuSeconds(server.child.pid!);
      const threadsBefore = threadCpuSeconds(server.child.pid!);
      const load = await runLoad({ ...job, durationSeconds: options.durationSeconds });
      const cpu = cpuSeconds(server.child.pid!) - cpuBefore;
      const threads = new Map<string, number>();
      for (const [name, seconds] of threadCpuSeconds(server.child.pid!))
        threads.set(name, ((seconds - (threadsBefore.get(name) ?? 0)) / load.requests) * 1e6);
      const { profile } = await session.call<{ profile: CpuProfile }>('Profiler.stop');
      return {
        requests: load.requests,
        cpuMicrosPerRequest: (cpu / load.requests) * 1e6,
        parts: selfTimeByPart(profile, partOf),
        top: topFunctions(profile, TOP_FUNCTIONS),
        threads,
      };
    } finally {
      session.close();
    }
  } finally {
    await server.stop();
  }
}

/**
 * Where a POST /v1/events goes, part by part, in the service and in bare express, from a CPU
 * profile of each under the same load (µs of the main thread per request, sampled every 100 µs).
 * The profile's clock is wall time: on a loaded machine a part's figure includes moments the
 * thread waited for a core, so the table ranks parts; the CPU per request read from /proc is
 * given beside it.
 */
export async function requestCostSuite(options: RequestCostOptions): Promise<{ markdown: string }> {
  const service = await profiled((nodeOptions) => startService({ LOG_LEVEL: 'warn' }, nodeOptions), options);
  const durable = await profiled(
    (nodeOptions) => startService({ LOG_LEVEL: 'warn', STORE: 'sqlite' }, nodeOptions),
    options,
  );
  const express = await profiled((nodeOptions) => startBareExpress({}, nodeOptions), options);
  const measured = [service, durable, express];
  const perRequest = (run: Measured, part: string) => round((run.parts.get(part) ?? 0) / run.requests, 1);
  const busy = (run: Measured) =>
    round(
      [...run.parts].filter(([part]) => part !== 'idle').reduce((total, [, micros]) => total + micros, 0) /
        run.requests,
      1,
    );
  const rows = PARTS.map(({ part }) => [part, ...measured.map((run) => perRequest(run, part))]);
  rows.push(['**all but idle (profile)**', ...measured.map(busy)]);
  rows.push([
    '**server CPU per request (/proc, all threads)**',
    ...measured.map((run) => round(run.cpuMicrosPerRequest, 1)),
  ]);
  const parts = table(
    ['part of a request', 'service, memory µs/request', 'service, SQLite µs/request', 'bare express 5 µs/request'],
    rows,
  );
  const top = table(
    ['function (self time), service on SQLite', 'µs/request'],
    durable.top.map(({ place, micros }) => [`\`${place}\``, round(micros / durable.requests, 1)]),
  );
  const names = [...new Set(measured.flatMap((run) => [...run.threads.keys()]))].sort();
  const threads = table(
    ['thread (/proc, CPU µs/request)', 'service, memory', 'service, SQLite', 'bare express 5'],
    names.map((name) => [`\`${name}\``, ...measured.map((run) => round(run.threads.get(name) ?? 0, 1))]),
  );
  return {
    markdown:
      `${parts}\n\nThe ${TOP_FUNCTIONS} functions with the most self time in the SQLite run:\n\n${top}\n\n` +
      `The CPU of each thread, by its name (threads of one name added up):\n\n${threads}`,
  };
}
