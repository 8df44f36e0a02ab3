import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createHttpServer, request } from 'node:http';
import type { Server, Socket } from 'node:net';
import { connect, createServer as createTcpServer } from 'node:net';

export interface Proxy {
  port: number;
  close(): Promise<void>;
}

const listen = (server: Server, port: number) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : port);
    });
  });

/** Open connections would keep `close` waiting: a stopping proxy cuts them. */
const closeAll = (server: Server, sockets: Set<Socket>) =>
  new Promise<void>((resolve) => {
    for (const socket of sockets) socket.destroy();
    server.close(() => resolve());
  });

/** How long a backend that failed is passed over, as a load balancer's passive health check would. */
const FAILED_BACKEND_PAUSE_MS = 2000;

/**
 * The next backend in turn, skipping those that failed lately (unless all did); none while the
 * list is empty (local-cluster.ts binds a proxy before its backends have started).
 */
function roundRobin(backends: number[]) {
  let next = 0;
  const failedAt = new Map<number, number>();
  return {
    next(): number | undefined {
      if (backends.length === 0) return undefined;
      for (let step = 0; step < backends.length; step += 1) {
        const backend = backends[next++ % backends.length]!;
        if (Date.now() - (failedAt.get(backend) ?? Number.NEGATIVE_INFINITY) > FAILED_BACKEND_PAUSE_MS) return backend;
      }
      return backends[next++ % backends.length]!;
    },
    failed(backend: number): void {
      failedAt.set(backend, Date.now());
    },
  };
}

const refused = (error: unknown) => (error as NodeJS.ErrnoException).code === 'ECONNREFUSED';

/**
 * A local stand-in for a load balancer: each HTTP request goes to the next service process in
 * turn, with no affinity. A request gets an `Idempotency-Key` unless it has one, so when the
 * process it went to dies before answering, it is sent again, with the same key, to the next
 * one: in cluster mode Restate then runs the command once and the retry gets its answer.
 */
export async function httpRoundRobin(backends: number[], port = 0): Promise<Proxy> {
  const pick = roundRobin(backends);
  const sockets = new Set<Socket>();
  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer, tried: number) => {
    const backend = pick.next();
    if (backend === undefined) {
      res
        .writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' })
        .end(JSON.stringify({ detail: 'no service process has started yet' }));
      return;
    }
    const headers = { ...req.headers, 'idempotency-key': req.headers['idempotency-key'] ?? randomUUID() };
    const upstream = request(
      { host: '127.0.0.1', port: backend, method: req.method, path: req.url, headers },
      (answer) => {
        // Connection and Keep-Alive are the backend's own, for its connection to this proxy: passed
        // on, a backend's `Keep-Alive: timeout=65` told clients to keep an idle connection to the
        // proxy longer than the proxy's own 5 s, and a request sent on one just as the proxy closed it
        // failed ("other side closed"). The proxy's server sets its own.
        const { connection: _connection, 'keep-alive': _keepAlive, ...headers } = answer.headers;
        res.writeHead(answer.statusCode ?? 502, headers);
        answer.pipe(res);
        res.on('close', () => answer.destroy());
      },
    );
    upstream.on('error', (error) => {
      pick.failed(backend);
      if (!res.headersSent && tried + 1 < backends.length * 2) {
        req.headers['idempotency-key'] = headers['idempotency-key'];
        // A refused connection is retried at once; a process that died mid-request, after a breath.
        return refused(error)
          ? forward(req, res, body, tried + 1)
          : void setTimeout(() => forward(req, res, body, tried + 1), 100);
      }
      if (!res.headersSent)
        res
          .writeHead(502, { 'content-type': 'application/json' })
          .end(JSON.stringify({ detail: 'no service process answered' }));
      else res.destroy();
    });
    upstream.end(body);
  };
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => forward(req, res, Buffer.concat(chunks), 0));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const bound = await listen(server, port);
  return { port: bound, close: () => closeAll(server, sockets) };
}

/**
 * The same in front of the service processes' Restate endpoints, at the connection level (the
 * Restate server speaks HTTP/2 to them): each new connection goes to the next endpoint that
 * accepts it. When one dies, its connections drop and Restate's retries reconnect to another.
 */
export async function tcpRoundRobin(backends: number[], port = 0): Promise<Proxy> {
  const pick = roundRobin(backends);
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };
  const server = createTcpServer({ noDelay: true }, (client) => {
    track(client);
    client.pause();
    const attempt = (tried: number) => {
      const backend = pick.next();
      // Restate, restarted on kept data, may call a pending invocation's deployment before any
      // endpoint is up: the connection is refused, as it would be with nothing listening, and retried.
      if (backend === undefined) return void client.destroy();
      // Without noDelay, Nagle's algorithm against delayed ACKs holds small HTTP/2 frames about 40 ms.
      const upstream = connect({ port: backend, host: '127.0.0.1', noDelay: true });
      track(upstream);
      upstream.once('error', (error) => {
        pick.failed(backend);
        if (refused(error) && tried + 1 < backends.length) return attempt(tried + 1);
        client.destroy();
      });
      upstream.once('connect', () => {
        upstream.removeAllListeners('error');
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
        client.pipe(upstream).pipe(client);
        client.resume();
      });
    };
    attempt(0);
  });
  const bound = await listen(server, port);
  return { port: bound, close: () => closeAll(server, sockets) };
}
