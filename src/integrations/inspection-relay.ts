import type { IncomingMessage } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { RawData } from 'ws';
import { WebSocket, WebSocketServer } from 'ws';
import { viewerPage } from './inspection-viewer-page.js';
import { isLoopbackHost } from '../domain/loopback.js';

/**
 * The inspection relay: publishers (this service's inspector, or several processes) send
 * inspection events over a WebSocket; every other connected client (the viewer page, a
 * `createWebSocketReceiver`) receives each one. Written on `ws` rather than taken from
 * `@statelyai/inspect/server`, whose relay listens on every interface with no way to choose,
 * has no error handling (a port in use would crash the service) and replays only the last
 * 200 messages, which loses the machines of long-lived sessions.
 */
export interface InspectionRelay {
  /** Where publishers and receivers connect: `ws://host:port`. */
  url: string;
  /** The page an operator opens in a browser. */
  viewerUrl: string;
  close(): Promise<void>;
}

export interface InspectionRelayOptions {
  host: string;
  port: number;
  logger: Logger;
  /** Machines whose registration and latest snapshot are kept for viewers that connect later. */
  retainedActors?: number;
}

export class InspectionRelayError extends Error {
  override name = 'InspectionRelayError';
}

const DEFAULT_RETAINED_ACTORS = 200;
/** A session's snapshot is bounded (a few hundred KiB at most); anything far larger is not ours. */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/** A viewer with this much unsent data queued is not reading: cut it rather than grow memory. */
const MAX_QUEUED_BYTES = 8 * 1024 * 1024;
/** Actors in these states will not change again: nothing to show a later viewer. */
const FINISHED = new Set<unknown>(['done', 'error', 'stopped']);

interface Retained {
  registration: string;
  snapshot: string | undefined;
}

interface InspectionMessageHead {
  type?: unknown;
  sessionId?: unknown;
  snapshot?: { status?: unknown } | null;
}

/**
 * The registration and latest snapshot of the most recently active actors, so that a viewer
 * opened (or reloaded) while sessions run sees their machines, not only what happens next.
 */
class RetainedActors {
  private readonly actors = new Map<string, Retained>();

  constructor(private readonly capacity: number) {}

  note(text: string): void {
    let head: InspectionMessageHead;
    try {
      head = JSON.parse(text) as InspectionMessageHead;
    } catch {
      return;
    }
    if (typeof head.sessionId !== 'string') return;
    const id = head.sessionId;
    if (head.type === '@xstate.actor') {
      this.actors.delete(id);
      this.actors.set(id, { registration: text, snapshot: undefined });
    } else if (head.type === '@xstate.snapshot') {
      const known = this.actors.get(id);
      if (!known) return;
      this.actors.delete(id);
      if (!FINISHED.has(head.snapshot?.status)) this.actors.set(id, { ...known, snapshot: text });
    } else {
      return;
    }
    if (this.actors.size > this.capacity) this.actors.delete(this.actors.keys().next().value!);
  }

  *replay(): Iterable<string> {
    for (const { registration, snapshot } of this.actors.values()) {
      yield registration;
      if (snapshot !== undefined) yield snapshot;
    }
  }
}

const textOf = (data: RawData): string =>
  (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer)).toString('utf8');

export async function startInspectionRelay(options: InspectionRelayOptions): Promise<InspectionRelay> {
  const { logger } = options;
  const retained = new RetainedActors(options.retainedActors ?? DEFAULT_RETAINED_ACTORS);
  const loopbackOnly = isLoopbackHost(options.host);

  // Bound to loopback, a request naming another host is a DNS-rebinding page: refuse it.
  const hostAllowed = (req: IncomingMessage): boolean => {
    if (!loopbackOnly) return true;
    const host = req.headers.host ?? '';
    return isLoopbackHost(host.replace(/:\d+$/, ''));
  };

  const http = createServer((req, res) => {
    if (!hostAllowed(req)) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end('forbidden host\n');
      return;
    }
    if (req.method !== 'GET' || (req.url ?? '/').split('?')[0] !== '/') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    res
      .writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
      })
      .end(viewerPage());
  });

  const wss = new WebSocketServer({
    server: http,
    maxPayload: MAX_MESSAGE_BYTES,
    // Node clients send no Origin; a browser may connect only from the viewer page this relay served.
    verifyClient: ({ origin, req }: { origin: string | undefined; req: IncomingMessage }) =>
      hostAllowed(req) && (origin === undefined || origin === `http://${req.headers.host}`),
  });

  const broadcast = (text: string, from: WebSocket) => {
    for (const client of wss.clients) {
      if (client === from || client.readyState !== WebSocket.OPEN) continue;
      if (client.bufferedAmount > MAX_QUEUED_BYTES) {
        logger.warn('inspection viewer cut: not reading');
        client.terminate();
        continue;
      }
      client.send(text);
    }
  };

  wss.on('connection', (socket) => {
    for (const message of retained.replay()) socket.send(message);
    socket.on('message', (data, isBinary) => {
      if (isBinary) return;
      const text = textOf(data);
      retained.note(text);
      broadcast(text, socket);
    });
    socket.on('error', (error) => logger.debug({ err: error }, 'inspection relay client error'));
  });
  wss.on('error', (error) => logger.warn({ err: error }, 'inspection relay error'));

  await new Promise<void>((resolve, reject) => {
    http.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new InspectionRelayError(`cannot listen on ${options.host}:${options.port} (${error.code ?? error.message})`),
      ),
    );
    http.listen(options.port, options.host, () => resolve());
  });
  http.on('error', (error) => logger.warn({ err: error }, 'inspection relay error'));

  const address = http.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const reachableHost = shownHost === '0.0.0.0' || shownHost === '[::]' ? '127.0.0.1' : shownHost;
  const relay: InspectionRelay = {
    url: `ws://${reachableHost}:${address.port}`,
    viewerUrl: `http://${reachableHost}:${address.port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close();
        http.close(() => resolve());
      }),
  };
  return relay;
}
