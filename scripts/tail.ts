/**
 * Follows the activity stream and prints one line per item:
 *
 *   npm run tail -- [--session ID] [--kind KIND] [--url URL] [--key KEY]
 *
 * Reads GET /api/activity/stream with fetch (so it can send X-API-Key, which EventSource
 * cannot), reconnects after a drop with Last-Event-ID so nothing is missed or printed twice,
 * and exits 0 on Ctrl-C. Items go to stdout; connection notices go to stderr.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type { EventSourceMessage } from 'eventsource-parser';
import { createParser } from 'eventsource-parser';
import type { operations, ServiceClient } from '../src/client/index.js';
import { createServiceClient } from '../src/client/index.js';

const USAGE = `usage: npm run tail -- [--session ID] [--kind KIND] [--url URL] [--key KEY]
  --session  only this session_id
  --kind     only this activity kind (event, trigger, session_start, session_stop, ...)
  --url      the service (default $ACTIVITY_URL or http://127.0.0.1:8080)
  --key      X-API-Key (default $ACTIVITY_API_KEY)`;

const FIRST_RECONNECT_MS = 500;
const MAX_RECONNECT_MS = 30_000;
/** A line or message longer than this is not from this service: stop rather than buffer it. */
const MAX_PARSER_BUFFER = 8 * 1024 * 1024;
const SUMMARY_CHARS = 160;

interface TailOptions {
  streamUrl: URL;
  client: ServiceClient;
  query: StreamQuery;
}

type StreamQuery = NonNullable<operations['streamActivity']['parameters']['query']>;

/** Why one connection ended: retry it, or stop (the answer will not change by retrying). */
type Outcome = { retry: true; afterMs?: number } | { retry: false; exitCode: number };

class UsageError extends Error {}

function parseOptions(argv: string[]): TailOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        session: { type: 'string' },
        kind: { type: 'string' },
        url: { type: 'string', default: process.env.ACTIVITY_URL ?? 'http://127.0.0.1:8080' },
        key: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) throw new UsageError('');
  let streamUrl: URL;
  try {
    streamUrl = new URL('/api/activity/stream', values.url);
  } catch {
    throw new UsageError('--url must be an http(s) URL, e.g. http://127.0.0.1:8080');
  }
  if (values.session !== undefined) streamUrl.searchParams.set('session_id', values.session);
  if (values.kind !== undefined) streamUrl.searchParams.set('kind', values.kind);
  // kind is passed on as typed: the service checks it and answers 422 naming the kinds, which is printed.
  const query = { session_id: values.session, kind: values.kind } as StreamQuery;
  const client = createServiceClient({ baseUrl: streamUrl.origin, apiKey: values.key ?? process.env.ACTIVITY_API_KEY });
  return { streamUrl, client, query };
}

/** Terminal-safe: control characters (escape sequences included) never reach the screen. */
const printable = (text: string): string => text.replace(/\p{Cc}/gu, '?');

function summarize(payload: unknown): string {
  if (payload === null || typeof payload !== 'object') return '';
  const parts: string[] = [];
  for (const [key, value] of Object.entries(payload)) {
    if (value === null || value === undefined) continue;
    const shown = typeof value === 'string' && /^[\w.:@*/+-]+$/.test(value) ? value : JSON.stringify(value);
    parts.push(`${key}=${shown}`);
  }
  const text = printable(parts.join(' '));
  return text.length > SUMMARY_CHARS ? `${text.slice(0, SUMMARY_CHARS - 1)}…` : text;
}

interface ShownItem {
  id: string;
  kind: string;
  timestamp: string;
  session_id: string;
  payload: unknown;
}

function formatItem(item: ShownItem): string {
  return (
    printable(`${item.timestamp}  ${item.kind.padEnd(13)}  ${item.session_id}  #${item.id}  `) + summarize(item.payload)
  );
}

const notice = (text: string) => process.stderr.write(`tail: ${printable(text)}\n`);

class ActivityTail {
  /** Sent as Last-Event-ID: the id of the last message, as EventSource keeps it. */
  private lastEventId: string | undefined;
  /** Ids at or below this were printed already; cleared by a reset, after which ids may start lower. */
  private printedUpTo = 0;

  constructor(private readonly options: TailOptions) {}

  async run(signal: AbortSignal): Promise<number> {
    let delay = FIRST_RECONNECT_MS;
    while (!signal.aborted) {
      const outcome = await this.connectOnce(signal, () => (delay = FIRST_RECONNECT_MS));
      if (signal.aborted) return 0;
      if (!outcome.retry) return outcome.exitCode;
      const wait = outcome.afterMs ?? delay;
      notice(
        `reconnecting in ${(wait / 1000).toFixed(1)} s${this.lastEventId ? ` (after id ${this.lastEventId})` : ''}`,
      );
      try {
        await sleep(wait, undefined, { signal });
      } catch {
        return 0;
      }
      delay = Math.min(delay * 2, MAX_RECONNECT_MS);
    }
    return 0;
  }

  private async connectOnce(signal: AbortSignal, onConnected: () => void): Promise<Outcome> {
    let response: Response;
    let refusal: unknown;
    try {
      ({ response, error: refusal } = await this.options.client.GET('/api/activity/stream', {
        params: { query: this.options.query, header: this.lastEventId ? { 'Last-Event-ID': this.lastEventId } : {} },
        headers: { accept: 'text/event-stream' },
        parseAs: 'stream',
        signal,
      }));
    } catch (error) {
      if (!signal.aborted) notice(`cannot reach ${this.options.streamUrl.origin}: ${causeOf(error)}`);
      return { retry: true };
    }
    if (!response.ok || !response.body) return this.refused(response, refusal);

    onConnected();
    notice(
      `connected to ${this.options.streamUrl.href}${this.lastEventId ? `, resuming after id ${this.lastEventId}` : ''}`,
    );
    const parser = createParser({
      onEvent: (message) => this.handle(message),
      onError: (error) => notice(`ignored a malformed line: ${error.message}`),
      maxBufferSize: MAX_PARSER_BUFFER,
    });
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
      notice('the server ended the stream');
    } catch (error) {
      if (!signal.aborted) notice(`connection lost: ${causeOf(error)}`);
    }
    return { retry: true };
  }

  /** `body` is the error answer as the client parsed it. */
  private refused(response: Response, body: unknown): Outcome {
    const detail = body !== null && typeof body === 'object' && 'detail' in body ? String(body.detail) : '';
    notice(`${response.status} ${response.statusText}${detail ? `: ${detail}` : ''}`);
    // Shutting down, over the stream cap, rate limited or failing: worth another try later.
    if (response.status === 429 || response.status >= 500) {
      const retryAfter = Number(response.headers.get('retry-after'));
      return Number.isFinite(retryAfter) && retryAfter > 0
        ? { retry: true, afterMs: retryAfter * 1000 }
        : { retry: true };
    }
    return { retry: false, exitCode: 2 };
  }

  private handle(message: EventSourceMessage): void {
    if (message.id !== undefined) this.lastEventId = message.id;
    if (message.event === 'reset') {
      const reset = parseJson(message.data) as
        { reason?: string; requested_after?: string | null; oldest_id?: string | null } | undefined;
      notice(
        reset?.reason === 'unknown_id'
          ? `the server does not know id ${this.lastEventId ?? '?'} (it restarted?); showing its whole buffer`
          : `items after id ${reset?.requested_after} and before id ${reset?.oldest_id} were dropped from the server's buffer before they could be sent`,
      );
      this.printedUpTo = 0;
      return;
    }
    if (message.event !== 'activity') return;
    const item = parseJson(message.data) as ShownItem | undefined;
    if (!item || typeof item.id !== 'string') return;
    const id = Number(item.id);
    if (id <= this.printedUpTo) return;
    this.printedUpTo = id;
    process.stdout.write(`${formatItem(item)}\n`);
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return String(cause?.code ?? cause?.message ?? (error as Error).message);
}

async function main(): Promise<void> {
  let options: TailOptions;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    if (error.message) process.stderr.write(`${error.message}\n`);
    process.stderr.write(`${USAGE}\n`);
    process.exit(error.message ? 2 : 0);
  }
  const stop = new AbortController();
  // `on`, not `once`: a second signal (Ctrl-C twice, or one relayed by a wrapper) must not kill it mid-exit.
  process.on('SIGINT', () => stop.abort());
  process.on('SIGTERM', () => stop.abort());
  process.exitCode = await new ActivityTail(options).run(stop.signal);
}

await main();
