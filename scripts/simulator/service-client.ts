import type { ServiceClient as Api } from '../../src/client/index.js';
import { createServiceClient } from '../../src/client/index.js';
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

/** What every request is sent with: the SDK's headers and the timeout's signal. */
export type SendInit = {
  headers: Record<string, string>;
  signal: AbortSignal;
};

export interface Call {
  /** The route, as the summary names it: `POST /v1/events`. */
  endpoint: string;
  /** The request through the typed client, so path, parameters and body are checked against the document. */
  send(api: Api, init: SendInit): Promise<{ response: Response; data?: unknown; error?: unknown }>;
  headers?: Record<string, string>;
}

/** One HTTP call timed from sending to the last byte of the answer; every call is counted. */
export class ServiceClient {
  private readonly api: Api;

  constructor(private readonly options: ServiceClientOptions) {
    this.api = createServiceClient({ baseUrl: options.url, apiKey: options.apiKey });
  }

  async call(call: Call): Promise<Answer> {
    const started = performance.now();
    // A timer of our own rather than AbortSignal.timeout, whose timer does not keep the process
    // alive: when a server hangs up, fetch can wait on nothing else, and the run would just end.
    const abort = new AbortController();
    const timer = setTimeout(
      () => abort.abort(new DOMException('request timed out', 'TimeoutError')),
      this.options.timeoutMs,
    );
    let answer: Answer;
    try {
      const { response, data, error } = await call.send(this.api, {
        headers: { ...call.headers },
        signal: abort.signal,
      });
      answer = { outcome: response.status, body: data ?? error };
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
