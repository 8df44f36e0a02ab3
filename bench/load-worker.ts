/**
 * The load generator, run in its own process so it never shares an event loop with the server
 * under test. Takes jobs from its parent over IPC and answers each with its result.
 */
import autocannon from 'autocannon';
import { benchSessionId, eventBody, ingestCommandBody, stuffedEventBody } from './lib/event-body.js';

export interface LoadJob {
  url: string;
  method: 'POST' | 'GET';
  /** Path, or a template with `{session}` replaced per request. */
  path: string;
  connections: number;
  durationSeconds?: number;
  /** Send exactly this many requests instead of running for a duration. */
  amount?: number;
  /** Sessions are chosen from 0..sessions-1: in order when `sequential`, else at random. */
  sessions: number;
  sequential?: boolean;
  /** Which body to send with POST. */
  body: 'event' | 'trigger' | 'stuffed' | 'ingest command';
  /** Requests per second over all connections; unset = as fast as the server answers. */
  overallRate?: number;
  headers?: Record<string, string>;
}

export interface LoadResult {
  requestsPerSecond: number;
  latencyP50: number;
  latencyP99: number;
  requests: number;
  /** Requests with no answer: connection errors and timeouts. */
  errors: number;
  non2xx: number;
  /** Each failure by its cause (`timeout`, `connection error`, or the status and the body's detail), when the generator tells them. */
  failures?: Record<string, number>;
}

/** A non-2xx answer's cause: its status and what its body's `detail` says. */
function failureCause(status: number, body: string | undefined): string {
  let detail = '';
  try {
    const parsed = JSON.parse(body ?? '') as { detail?: unknown };
    if (typeof parsed.detail === 'string') detail = ` ${parsed.detail.slice(0, 120)}`;
  } catch {
    detail = body ? ` ${body.slice(0, 120)}` : '';
  }
  return `${status}${detail}`;
}

function triggerBody(sessionId: string): string {
  return JSON.stringify({
    session_id: sessionId,
    user_id: 'user-42',
    signals: { screen: 'pan_details', time_spent: 8, errors: ['pan_invalid'], idle_seconds: 3 },
  });
}

async function run(job: LoadJob): Promise<LoadResult> {
  let counter = 0;
  const failures: Record<string, number> = {};
  const count = (cause: string, times = 1) => {
    if (times > 0) failures[cause] = (failures[cause] ?? 0) + times;
  };
  const nextSession = () =>
    benchSessionId(job.sequential ? counter++ % job.sessions : Math.floor(Math.random() * job.sessions));
  const result = await autocannon({
    url: job.url,
    connections: job.connections,
    ...(job.overallRate !== undefined ? { overallRate: job.overallRate } : {}),
    ...(job.amount !== undefined ? { amount: job.amount } : { duration: job.durationSeconds ?? 5 }),
    requests: [
      {
        method: job.method,
        setupRequest: (request) => {
          const session = nextSession();
          const path = job.path.replace('{session}', session);
          if (job.method === 'GET') return { ...request, path };
          const body =
            job.body === 'trigger'
              ? triggerBody(session)
              : job.body === 'stuffed'
                ? stuffedEventBody(session)
                : job.body === 'ingest command'
                  ? ingestCommandBody(session)
                  : eventBody(session);
          return {
            ...request,
            path,
            body,
            headers: { ...request.headers, 'content-type': 'application/json', ...job.headers },
          };
        },
        onResponse: (status, body) => {
          if (status < 200 || status >= 300) count(failureCause(status, body));
        },
      },
    ],
  });
  return {
    requestsPerSecond: result.requests.average,
    latencyP50: result.latency.p50,
    latencyP99: result.latency.p99,
    requests: result.requests.total,
    // autocannon counts a timeout among its errors too.
    errors: result.errors,
    non2xx: result.non2xx,
    failures: (count('timeout', result.timeouts), count('connection error', result.errors - result.timeouts), failures),
  };
}

// One long-lived worker takes every job in turn over IPC: a process per job would pay Node and
// tsx start-up (about half a second) each time.
process.on('message', (message: { id: number; job: LoadJob }) => {
  run(message.job).then(
    (result) => process.send!({ id: message.id, result }),
    (error: unknown) => process.send!({ id: message.id, error: String(error) }),
  );
});
