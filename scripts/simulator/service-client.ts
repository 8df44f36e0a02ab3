import type { Outcome, RequestStats } from './request-stats.js';

export interface ServiceClientOptions {
  url: string;
  apiKey: string | undefined;
  timeoutMs: number;
  stats: RequestStats;
  /** Called after each request, for progress displays. */
  onRequest?: (() => void) | undefined;
}

export interface Answer {
  outcome: Outcome;
  body: unknown;
}

export interface Call {
  /** The route, as the summary names it: `POST /v1/events`. */
  endpoint: string;
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
}

/** One HTTP call timed from sending to the last byte of the answer; every call is counted. */
export class ServiceClient {
  constructor(private readonly options: ServiceClientOptions) {}

  async call(call: Call): Promise<Answer> {
    const headers: Record<string, string> = { ...call.headers };
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    if (this.options.apiKey) headers['x-api-key'] = this.options.apiKey;
    const started = performance.now();
    // A timer of our own rather than AbortSignal.timeout, whose timer does not keep the process
    // alive: when a server hangs up, fetch can wait on nothing else, and the run would just end.
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(new DOMException('request timed out', 'TimeoutError')), this.options.timeoutMs);
    let answer: Answer;
    try {
      const response = await fetch(new URL(call.path, this.options.url), {
        method: call.method,
        headers,
        body: call.body === undefined ? undefined : JSON.stringify(call.body),
        signal: abort.signal,
      });
      const text = await response.text();
      answer = { outcome: response.status, body: parseJson(text) };
    } catch (error) {
      answer = { outcome: (error as Error).name === 'TimeoutError' ? 'timeout' : 'network', body: undefined };
    } finally {
      clearTimeout(timer);
    }
    this.options.stats.record(call.endpoint, answer.outcome, performance.now() - started);
    this.options.onRequest?.();
    return answer;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
