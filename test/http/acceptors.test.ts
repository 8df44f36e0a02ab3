import { once } from 'node:events';
import type { AddressInfo, Socket } from 'node:net';
import { connect, createServer } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { BoundServer } from '../../src/http/server.js';
import { bind } from '../../src/http/server.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function bound(acceptors: number, port = 0): Promise<BoundServer> {
  const server = await bind({ port, host: '127.0.0.1', requestTimeoutSeconds: 10, acceptors });
  cleanups.push(() => {
    server.acceptors.close();
    server.server.closeAllConnections();
    return new Promise<void>((resolve) => server.server.close(() => resolve()));
  });
  return server;
}

const portOf = ({ server }: BoundServer) => (server.address() as AddressInfo).port;

/** Turns of the event loop until `count` connections, made at once and waiting in the listen queues, are all taken in. */
async function turnsToTakeIn(acceptors: number, count: number): Promise<number> {
  const server = await bound(acceptors);
  let taken = 0;
  server.server.on('connection', (socket: Socket) => {
    taken += 1;
    socket.destroy();
  });
  // Taken in is not yet wanted: the clients connect first, the kernel completing every handshake.
  const clients = Array.from({ length: count }, () =>
    connect(portOf(server), '127.0.0.1').on('error', () => undefined),
  );
  cleanups.push(() => clients.forEach((client) => client.destroy()));
  const before = taken;
  await Promise.all(clients.filter((client) => client.connecting).map((client) => once(client, 'connect')));
  expect(before).toBe(0);
  let turns = 0;
  while (taken < count && turns < 10 * count) {
    await nextTurn();
    turns += 1;
  }
  expect(taken).toBe(count);
  return turns;
}

describe('the port has HTTP_ACCEPTORS listening sockets (src/http/acceptors.ts)', () => {
  it('takes a burst of connections in within a few turns of a busy event loop, where one socket takes one a turn', async () => {
    const one = await turnsToTakeIn(1, 40);
    const many = await turnsToTakeIn(64, 40);
    // Node's libuv takes one connection a turn from each listening socket: the burst waits that many turns on one.
    expect(many).toBeLessThanOrEqual(10);
    expect(one).toBeGreaterThan(2 * many);
  });

  it('refuses a port another listener holds, as one socket would (EADDRINUSE)', async () => {
    const other = createServer();
    other.listen(0, '127.0.0.1');
    await once(other, 'listening');
    cleanups.push(() => other.close());
    await expect(bound(8, (other.address() as AddressInfo).port)).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });

  it("refuses a second service on its port: sharing it would split the first one's connections", async () => {
    const first = await bound(8);
    await expect(bound(8, portOf(first))).rejects.toMatchObject({ code: 'EADDRINUSE' });
    await expect(bound(1, portOf(first))).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });

  it('stops every listening socket when closed: the port refuses connections', async () => {
    const server = await bound(8);
    const port = portOf(server);
    for (const cleanup of cleanups.splice(0)) await cleanup();
    const refused = await new Promise<string>((resolve) => {
      const client = connect(port, '127.0.0.1');
      client.on('connect', () => {
        client.destroy();
        resolve('connected');
      });
      client.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
  });
});
