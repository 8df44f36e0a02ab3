/**
 * Several sockets listening on the service's port, so that a busy event loop still takes new
 * connections in. Node's libuv takes one connection from a listening socket per turn of the event
 * loop; under an attack whose turns were long that was a few connections a second, the listen
 * queue stood full for the whole attack, and a fresh client with a valid key waited seconds (docs/reference/limits.md, "one accept per turn"). With `HTTP_ACCEPTORS` sockets bound with
 * `SO_REUSEPORT`, the kernel spreads new connections over them and each turn takes one from each.
 *
 * `SO_REUSEPORT` would also let a second process of the same user bind the port beside this one
 * and silently take part of its connections, so a fixed port is first bound without it, as a
 * probe: a port anyone holds is refused as before (EADDRINUSE), and once the acceptors hold it a
 * later probe of another process fails the same way.
 */
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo, Server, Socket } from 'node:net';
import { createServer } from 'node:net';

const listening = (server: Server, options: { port: number; host: string; reusePort?: boolean }): Promise<void> =>
  new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options, () => {
      server.off('error', reject);
      resolve();
    });
  });

/** Fails as a plain listen would (EADDRINUSE and the like) if anything, this service's acceptors included, holds the port. */
async function probePort(port: number, host: string): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await listening(probe, { port, host });
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}

/** Listens `server` on the port and `count - 1` more sockets beside it, each handing its connections to `server`. */
export async function listenWithAcceptors(
  server: HttpServer,
  { port, host, count }: { port: number; host: string; count: number },
): Promise<Acceptors> {
  if (count <= 1) {
    await listening(server, { port, host });
    return { close: () => undefined };
  }
  await probePort(port, host);
  await listening(server, { port, host, reusePort: true });
  const bound = (server.address() as AddressInfo).port;
  const extra: Server[] = [];
  try {
    for (let n = 1; n < count; n += 1) {
      // What `server` would do with a connection it accepted itself: its own 'connection' listeners run.
      const acceptor = createServer((socket: Socket) => server.emit('connection', socket));
      await listening(acceptor, { port: bound, host, reusePort: true });
      extra.push(acceptor);
    }
  } catch (error) {
    for (const acceptor of extra) acceptor.close();
    server.close();
    throw error;
  }
  return {
    close: () => {
      for (const acceptor of extra) acceptor.close();
    },
  };
}

export interface Acceptors {
  /** Stops the extra sockets listening (the server's own socket closes with the server). */
  close(): void;
}
