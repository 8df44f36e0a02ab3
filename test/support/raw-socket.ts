import { once } from 'node:events';
import type { Socket } from 'node:net';
import { connect } from 'node:net';

/** A raw connection that records what it receives and whether the server closed it; `cleanups` gets its destroy. */
export function rawSocket(
  port: number,
  cleanups: (() => unknown)[],
): { socket: Socket; text: () => string; closed: Promise<unknown> } {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  cleanups.push(() => socket.destroy());
  return { socket, text: () => received, closed: once(socket, 'close') };
}
