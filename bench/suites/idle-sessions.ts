import { readFileSync } from 'node:fs';
import type { ServerProcess } from '../lib/processes.js';
import { runLoad, rssBytes, sleep } from '../lib/processes.js';
import { expectHeld } from '../lib/held-sessions.js';
import { round, table } from '../lib/stats.js';
import { startService } from '../lib/targets.js';

export interface IdleSessionsOptions {
  sessions: number;
  /** Light traffic before the sessions, its lowest RSS the baseline. */
  beforeSeconds: number;
  /** Light traffic once every session is idle and out of memory, its lowest RSS the settled figure. */
  afterSeconds: number;
  hibernateSeconds: number;
}

export interface IdleSessionsResult {
  markdown: string;
  bytesPerIdleSession: number;
}

/** What the service's own status says of its heap (GET /api/status, `memory`). */
interface StatusMemory {
  heap_used_bytes: number;
  heap_committed_bytes: number;
  heap_trims: number;
}

/** RSS split by kind (anonymous: heaps and buffers; file: code and mapped files), from /proc. */
function rssParts(pid: number): { anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
  return { anon: kib('RssAnon'), file: kib('RssFile') + kib('RssShmem') };
}

/**
 * The settled RSS an idle session costs, measured as an outside trial measured it: the service
 * as `npm start` runs it on SQLite, the lowest RSS over `beforeSeconds` of light traffic (one
 * request at a time to ten sessions of its own), then `sessions` new sessions of one event each,
 * then, once every one of them has hibernated, the lowest RSS over `afterSeconds` of the same light
 * traffic. RSS is sampled from /proc every 100 ms; nothing is forced (no collection through an
 * inspector): what counts is what the service gives back by itself (docs/reference/limits.md, "Idle sessions").
 */
export async function idleSessionsSuite(options: IdleSessionsOptions): Promise<IdleSessionsResult> {
  const server = await startService({
    LOG_LEVEL: 'warn',
    STORE: 'sqlite',
    SESSION_HIBERNATE_SECONDS: String(options.hibernateSeconds),
  });
  try {
    const pid = server.child.pid!;
    const before = await lightTraffic(server, pid, options.beforeSeconds);
    const beforeStatus = await memoryOf(server);
    await runLoad({
      url: server.url,
      method: 'POST',
      path: '/v1/events',
      connections: 64,
      body: 'event',
      sessions: options.sessions,
      sequential: true,
      amount: options.sessions,
    });
    await expectHeld(server, options.sessions);
    // Every session out of memory: untouched for the delay, the last ones a little after.
    for (let waited = 0; ; waited += 1) {
      const status = (await (await fetch(`${server.url}/api/status`)).json()) as { sessions: { running: number } };
      if (status.sessions.running <= 10) break;
      if (waited > options.hibernateSeconds + 120) throw new Error(`${status.sessions.running} sessions still running`);
      await sleep(1000);
    }
    const after = await lightTraffic(server, pid, options.afterSeconds);
    const afterStatus = await memoryOf(server);
    const perSession = (after.lowest - before.lowest) / options.sessions;
    const mib = (bytes: number) => round(bytes / 2 ** 20, 1);
    const markdown = table(
      [
        '',
        'lowest RSS MiB',
        'anonymous MiB',
        'file MiB',
        "V8's heap committed MiB",
        "V8's heap used MiB",
        'heap trims',
      ],
      [
        [
          `before: ${options.beforeSeconds} s of light traffic`,
          mib(before.lowest),
          mib(before.parts.anon),
          mib(before.parts.file),
          mib(beforeStatus.heap_committed_bytes),
          mib(beforeStatus.heap_used_bytes),
          beforeStatus.heap_trims,
        ],
        [
          `after: ${options.sessions.toLocaleString('en-US')} idle sessions, ${options.afterSeconds} s of light traffic`,
          mib(after.lowest),
          mib(after.parts.anon),
          mib(after.parts.file),
          mib(afterStatus.heap_committed_bytes),
          mib(afterStatus.heap_used_bytes),
          afterStatus.heap_trims,
        ],
      ],
    );
    return { markdown, bytesPerIdleSession: perSession };
  } finally {
    await server.stop();
  }
}

async function memoryOf(server: ServerProcess): Promise<StatusMemory> {
  return ((await (await fetch(`${server.url}/api/status`)).json()) as { memory: StatusMemory }).memory;
}

/** One request at a time to ten sessions for `seconds`; the lowest RSS seen, and its parts then. */
async function lightTraffic(
  server: ServerProcess,
  pid: number,
  seconds: number,
): Promise<{ lowest: number; parts: { anon: number; file: number } }> {
  let lowest = Number.POSITIVE_INFINITY;
  let parts = { anon: 0, file: 0 };
  const sampler = setInterval(() => {
    const rss = rssBytes(pid);
    if (rss < lowest) {
      lowest = rss;
      parts = rssParts(pid);
    }
  }, 100);
  try {
    await runLoad({
      url: server.url,
      method: 'POST',
      path: '/v1/events',
      connections: 1,
      body: 'event',
      sessions: 10,
      durationSeconds: seconds,
      overallRate: 20,
      headers: {},
    });
  } finally {
    clearInterval(sampler);
  }
  return { lowest, parts };
}
