import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Requests one connection may have under way at once. HTTP/1.1 lets a client send requests
 * without waiting for answers (pipelining), and Node hands every request of a chunk it reads to
 * the app in the same turn of the event loop: one 64 KB read is about 1,300 small requests. Twenty
 * connections pipelining `/health/live` without reading the answers made turns of 2.5 s for
 * 13 s, and RSS grew from 164 to 449 MiB (docs/decisions/0045-pipelining-depth.md). No SDK,
 * browser or curl pipelines.
 */
export const MAX_PIPELINED = 8;

export const PIPELINED_DETAIL =
  `more than ${MAX_PIPELINED} requests sent on one connection before the first was answered; ` +
  'this one and those after it were not worked on, and the connection is closed: send them again, ' +
  'one at a time';

/**
 * `handle` for each request, unless its connection already has MAX_PIPELINED under way. The first
 * request past that is answered 429 with `Connection: close`, after the answers before it (Node
 * keeps a connection's answers in order), and Node closes the connection after it. Those after it
 * are neither worked on nor answered: the connection ends before them, and a client retries what a
 * closed connection left unanswered (RFC 9112, 9.3.2). What Node has already read of them costs
 * only its parsing.
 */
export function limitPipelining(
  handle: RequestListener,
): RequestListener<typeof IncomingMessage, typeof ServerResponse> {
  const underWay = new WeakMap<Socket, number>();
  const refused = new WeakSet<Socket>();
  return (req, res) => {
    const { socket } = req;
    if (refused.has(socket)) return;
    const count = (underWay.get(socket) ?? 0) + 1;
    if (count > MAX_PIPELINED) {
      refused.add(socket);
      // Once the refusal is written, after the answers before it, nothing more of the connection
      // is read: Node would go on reading and parsing what the client sent after it. What is
      // still queued for a client that reads goes out first.
      res.once('finish', () => (socket.writableLength === 0 ? socket.destroy() : socket.destroySoon()));
      const body = JSON.stringify({ detail: PIPELINED_DETAIL });
      res.writeHead(429, {
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': Buffer.byteLength(body),
        Connection: 'close',
      });
      res.end(body);
      return;
    }
    underWay.set(socket, count);
    res.once('close', () => underWay.set(socket, (underWay.get(socket) ?? 1) - 1));
    handle(req, res);
  };
}
