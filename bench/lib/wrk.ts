import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { LoadJob, LoadResult } from '../load-worker.js';
import { benchSessionId, eventBody } from './event-body.js';

/**
 * wrk as the load generator of pinned runs. On one core autocannon (a Node program) generates
 * fewer requests than bare `node:http` answers on another, so the fastest baselines would be
 * measured at the generator's ceiling and every ratio to them flattered; wrk, in C, is not the
 * limit there (BENCHMARKS.md: "Pinned"). Jobs it cannot express (a fixed count, a rate, GET
 * templates) stay on autocannon.
 */
let available: boolean | undefined;

export function wrkAvailable(): boolean {
  if (available === undefined) {
    try {
      execFileSync('wrk', ['--version'], { stdio: 'ignore' });
      available = true;
    } catch (error) {
      // wrk prints its version and exits 1: present all the same.
      available = (error as { status?: number | null }).status === 1;
    }
  }
  return available;
}

/** A job wrk runs as autocannon would: the ingestion event, random sessions, for a duration. */
export function wrkCanRun(job: LoadJob): boolean {
  return (
    job.method === 'POST' &&
    job.body === 'event' &&
    job.durationSeconds !== undefined &&
    job.amount === undefined &&
    job.overallRate === undefined &&
    !job.sequential &&
    job.headers === undefined &&
    !job.path.includes('{session}')
  );
}

const luaString = (text: string) => `"${text.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;

/** The script: each request a random session's body, and the result as one line of JSON. */
function script(job: LoadJob): string {
  const bodies = Array.from({ length: job.sessions }, (_, n) => luaString(eventBody(benchSessionId(n))));
  return `local bodies = {${bodies.join(',\n')}}
local headers = { ["Content-Type"] = "application/json" }
math.randomseed(42)
request = function()
  return wrk.format("POST", ${luaString(job.path)}, headers, bodies[math.random(#bodies)])
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('\\nWRK_RESULT {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"errors":%d,"timeouts":%d,"non2xx":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), e.connect + e.read + e.write + e.timeout, e.timeout, e.status))
end
`;
}

/** Runs `job` with wrk (one thread: the generator has its own core or cores) on `cpus`. */
export async function runWrk(job: LoadJob, cpus: string, threads: number): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'kyc-bench-wrk-'));
  try {
    const scriptPath = join(dir, 'event.lua');
    writeFileSync(scriptPath, script(job));
    // wrk's own timeout is 2 s: an answer later than that would count as a failure and drop out of
    // the latencies. Ten seconds, as autocannon's, so a slow answer is a latency like any other.
    const { stdout } = await promisify(execFile)(
      'taskset',
      [
        '-c',
        cpus,
        'wrk',
        '-t',
        String(threads),
        '-c',
        String(job.connections),
        '-d',
        `${job.durationSeconds}s`,
        '--timeout',
        '10s',
        '-s',
        scriptPath,
        job.url,
      ],
      { maxBuffer: 1 << 20 },
    );
    const line = stdout.split('\n').find((l) => l.startsWith('WRK_RESULT '));
    if (!line) throw new Error(`wrk printed no result: ${stdout.slice(-500)}`);
    const r = JSON.parse(line.slice('WRK_RESULT '.length)) as {
      requests: number;
      duration_us: number;
      p50_us: number;
      p99_us: number;
      errors: number;
      timeouts: number;
      non2xx: number;
    };
    // wrk tells no status: only how many answers were not 2xx or 3xx.
    const failures = Object.fromEntries(
      (
        [
          ['timeout', r.timeouts],
          ['connection error', r.errors - r.timeouts],
          ['status 4xx/5xx', r.non2xx],
        ] as const
      ).filter(([, times]) => times > 0),
    );
    return {
      requestsPerSecond: r.requests / (r.duration_us / 1e6),
      latencyP50: r.p50_us / 1000,
      latencyP99: r.p99_us / 1000,
      requests: r.requests,
      errors: r.errors,
      non2xx: r.non2xx,
      failures,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
