import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from 'pino';
import type { App } from './app.js';
import type { Acceptors } from './acceptors.js';
import { listenWithAcceptors } from './acceptors.js';
import { answerParserError } from './parser-errors.js';
import { limitPipelining } from './pipelining.js';

export interface RunningServer {
  server: Server;
  port: number;
  url: string;
  /**
   * Stop accepting and close every connection as soon as it has nothing under way: idle ones and
   * half-sent requests at once, the others when their response is done (sent with
   * `Connection: close`). Resolves when all are closed; sockets still open after `graceMs` are cut.
   */
  close(graceMs: number): Promise<void>;
}

export interface ListenOptions {
  port: number;
  host: string;
  /** Headers and body of a request must have arrived within this; slow clients get 408 or are cut. */
  requestTimeoutSeconds: number;
  /** Sockets listening on the port together (src/http/acceptors.ts). */
  acceptors: number;
}

/** The server listening, and the sockets that listen beside it. */
export interface BoundServer {
  server: Server;
  acceptors: Acceptors;
}

/** How long an idle keep-alive connection is kept: longer than a load balancer's usual 60 s, so it closes first. */
const KEEP_ALIVE_MS = 65_000;

/**
 * A server listening on the port with nothing behind it yet: start-up takes the port before it
 * opens the store or anything else, so a busy port stops it having taken nothing. Requests that
 * arrive before `serve` wait for it.
 */
export async function bind({ port, host, requestTimeoutSeconds, acceptors }: ListenOptions): Promise<BoundServer> {
  const server = createServer({
    // Node checks both every `connectionsCheckingInterval`: a trickled body or trickled headers
    // hold a connection for this long at most, not the minutes of the defaults.
    requestTimeout: requestTimeoutSeconds * 1000,
    headersTimeout: requestTimeoutSeconds * 1000,
    connectionsCheckingInterval: Math.min(1000, requestTimeoutSeconds * 250),
    keepAliveTimeout: KEEP_ALIVE_MS,
    // Only a WebSocket handshake leaves HTTP: any other `Upgrade` (curl's `h2c` offer) is a plain
    // request to be answered, as a server that does not speak it ignores it (RFC 9110, 7.8). Node 22.21
    // and 24.9 read this option; an older Node sends every upgrade to the control plane, which refuses it.
    shouldUpgradeCallback: (req) => String(req.headers.upgrade ?? '').toLowerCase() === 'websocket',
  });
  server.on('clientError', answerParserError);
  return { server, acceptors: await listenWithAcceptors(server, { port, host, count: acceptors }) };
}

export async function listen(app: App, options: ListenOptions, logger: Logger): Promise<RunningServer> {
  return serve(await bind(options), app, options.host, logger);
}

/** Puts the app behind a bound server. */
export function serve({ server, acceptors }: BoundServer, app: App, host: string, logger: Logger): RunningServer {
  server.on('request', limitPipelining(app.express));
  const { connections } = app;
  // A backstop on sockets of every kind; each kind's own cap is applied as it is counted.
  server.maxConnections = connections.totalLimit;
  server.on('connection', (socket: Socket) => {
    if (!connections.admit(socket)) socket.destroy();
  });
  // A WebSocket upgrade leaves HTTP: the control plane claims the socket in its own count.
  server.on('upgrade', app.controlPlane.handleUpgrade);
  const current = trackResponses(server);

  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${shownHost === '0.0.0.0' ? '127.0.0.1' : shownHost}:${address.port}`;
  // The port is in the message alone: a field of four digits or more is masked like any number the log holds (src/logger.ts).
  logger.info({ host }, `listening on ${url}`);

  return {
    server,
    port: address.port,
    url,
    close: (graceMs) =>
      new Promise<void>((resolve) => {
        app.beginShutdown();
        acceptors.close();
        // Every socket, upgraded ones included (server.closeAllConnections knows only HTTP ones).
        const force = setTimeout(() => {
          for (const socket of current.sockets()) socket.destroy();
        }, graceMs);
        force.unref();
        // The server's own count knows only the connections its socket took in, not those the
        // acceptors handed it (src/http/acceptors.ts): its close alone would resolve with requests
        // still under way on most connections, and the process would exit under them.
        const listenerClosed = new Promise<void>((done) => server.close(() => done()));
        void Promise.all([listenerClosed, current.allClosed()]).then(() => {
          clearTimeout(force);
          resolve();
        });
        for (const socket of current.sockets()) {
          // An upgraded connection is its protocol's to close (with a close frame), within the grace.
          if (connections.kindOf(socket) !== 'websocket') closeWhenDone(socket, current.responseOf(socket));
        }
        // A connection that finishes a response from now on closes instead of waiting for another request.
        current.onFinish((socket) => socket.destroySoon());
      }),
  };
}

/** Closes a connection at shutdown: at once when it has nothing under way, else when its response is done. */
function closeWhenDone(socket: Socket, res: ServerResponse | undefined): void {
  // Idle keep-alive, or headers only partly sent: nothing anyone waits for.
  if (!res) return void socket.destroy();
  // A body still arriving: waiting for it could take the whole request timeout.
  if (!res.req.complete) return void socket.destroy();
  if (!res.headersSent) res.setHeader('Connection', 'close');
}

/** The response under way on each connection, and a hook for responses as they finish. */
function trackResponses(server: Server) {
  const open = new Set<Socket>();
  // Not a Map: with a set and a delete on every request, V8 rebuilds a Map's table every few dozen
  // requests, and a table it replaced keeps a link to the next one (for iterators), so a replaced
  // table in the old generation kept the newer tables and the responses in them alive through
  // each scavenge: under load nearly every request was promoted whole
  // (docs/decisions/0014-nothing-outlives-the-young-generation.md). A WeakMap has no iterators, and no such link.
  const responses = new WeakMap<Socket, ServerResponse>();
  let finished: ((socket: Socket) => void) | undefined;
  let drained: (() => void)[] = [];
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      if (open.size > 0) return;
      for (const done of drained) done();
      drained = [];
    });
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const { socket } = req;
    responses.set(socket, res);
    res.once('finish', () => {
      if (responses.get(socket) === res) responses.delete(socket);
      finished?.(socket);
    });
  });
  return {
    sockets: () => [...open],
    /** Resolves once no connection is open, however each was taken in. */
    allClosed: () => (open.size === 0 ? Promise.resolve() : new Promise<void>((done) => void drained.push(done))),
    responseOf: (socket: Socket) => responses.get(socket),
    onFinish: (listener: (socket: Socket) => void) => (finished = listener),
  };
}
