import { errors, Pool } from 'undici';

/** What the Restate server answered: its status, its body, and the invocation it names (`x-restate-id`), if any. */
export interface RestateAnswer {
  status: number;
  text: string;
  invocationId: string | null;
}

export interface RestateRequest {
  method: 'GET' | 'POST' | 'PATCH';
  body?: string;
  headers?: Record<string, string>;
  /** How long to wait for the answer (the request may have been taken when it runs out). */
  timeoutMs: number;
}

/** No answer within the wait: the request went out and may have been taken. */
export class RestateTimeoutError extends Error {}

/** No answer at all: the server is down or unreachable from here. */
export class RestateUnreachableError extends Error {
  /**
   * Whether the request may have reached the server before the connection failed (reset or closed
   * on it): it may then have been taken. False only when no connection was made, so nothing was sent.
   */
  readonly maybeTaken: boolean;

  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
    this.maybeTaken = !neverConnected(options.cause);
  }
}

/** Connection errors that mean no connection was made (Node's and undici's codes). */
const NOT_CONNECTED = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

function neverConnected(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code !== undefined && NOT_CONNECTED.has(code)) return true;
    // Several addresses tried (localhost: ::1 and 127.0.0.1), each refused.
    if (cause instanceof AggregateError && cause.errors.length > 0 && cause.errors.every(neverConnected)) return true;
  }
  return false;
}

/**
 * One Restate address (the ingress, or the admin API) over a pool of kept HTTP/1.1 connections.
 * Every SDK event is one `/send` through here, so it is undici's `request`, not `fetch`: through
 * `fetch` (the same library behind web streams, with an AbortSignal a request) a relay's `/send`
 * took about twice as long under load (docs/decisions/0021-restate-partitions-and-client.md).
 */
export class RestateHttp {
  private readonly base: URL;
  private readonly pool: Pool;

  constructor(baseUrl: string) {
    this.base = new URL(baseUrl);
    // A connection not made in 2 s is as good as refused: the caller is answered, not kept waiting.
    this.pool = new Pool(this.base.origin, { connectTimeout: 2_000 });
  }

  /** `path` is relative to the base URL, as `new URL(path, base)` reads it. */
  async request(path: string, { method, body, headers = {}, timeoutMs }: RestateRequest): Promise<RestateAnswer> {
    const url = new URL(path, this.base);
    try {
      const response = await this.pool.request({
        path: url.pathname + url.search,
        method,
        headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body }),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const text = await response.body.text();
      const invocationId = response.headers['x-restate-id'];
      return {
        status: response.statusCode,
        text,
        invocationId: typeof invocationId === 'string' ? invocationId : null,
      };
    } catch (error) {
      const message = `${method} ${url.pathname}: ${error instanceof Error ? error.message : String(error)}`;
      if (error instanceof errors.HeadersTimeoutError || error instanceof errors.BodyTimeoutError)
        throw new RestateTimeoutError(message, { cause: error });
      throw new RestateUnreachableError(message, { cause: error });
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
