import type { RequestHandler } from 'express';
import type { LargeBodyTurns } from '../large-body-turns.js';

/**
 * A list page (a route with a `limit`) is built in a turn of the event loop of its own, in the
 * queue large bodies take their turns in (large-body-turns.ts). A page of 1,000 activity items
 * costs about 7 ms to read and write out; clients that ask for eight at a time on each of
 * thousands of connections had them all built in the turns that read their requests, and a fresh
 * client's probe waited 23–30 s (docs/decisions/0046-pages-take-turns.md). Taken here, each page
 * waits its turn and the light requests of every turn are served in it.
 *
 * A page whose client has gone while it waited (the unread answers' share cut it, or the client
 * left) is not built: in the same attack most of the pages were built for connections already
 * closed.
 */
export function pageTurns(turns: LargeBodyTurns): RequestHandler {
  return (req, res, next) => {
    turns.take(() => {
      if (req.socket.destroyed || res.writableEnded) return;
      next();
    });
  };
}
