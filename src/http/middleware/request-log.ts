import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { shownCut } from '../../privacy/shown-cut.js';
import { acceptableId } from '../../domain/trace.js';
import { requestContext } from '../request-context.js';
import { wasCut } from '../request-bodies.js';
import { shownPath } from '../shown-path.js';

const MAX_HEADER_SHOWN = 64;

/**
 * A correlation header as logged: only a plain id (the charset and length of any id this service
 * accepts), masked like any client text and cut to 64 characters; anything else is noted, never written. A secret pasted into the
 * wrong header thus never reaches the log whole, and no client can forge log lines through it.
 */
function loggableHeader(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const id = acceptableId(value.trim());
  if (id === undefined) return '[invalid]';
  return shownCut(id, MAX_HEADER_SHOWN);
}

/** The path alone (a query string can carry anything, an API key sent by mistake included), decoded and masked. */
function pathOf(originalUrl: string): string {
  const query = originalUrl.indexOf('?');
  return shownPath(query < 0 ? originalUrl : originalUrl.slice(0, query));
}

/**
 * One log line per request, written when the response is done, with the request id and the SDK's
 * correlation headers. Written here rather than with pino-http, which builds two or three child
 * loggers per request and serializes the request into each even when nothing will be logged:
 * git show d1df1cf:docs/benchmark-history.md has the measurement. No header is logged but these three, each only when it is a
 * plain id, and the query string is never logged, so no key can leak.
 */
export function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    // Health probes every few seconds would drown the log.
    if (req.path === '/health' || req.path.startsWith('/health/')) return next();
    const started = performance.now();
    // 'close' comes after 'finish' on a completed response and alone on an aborted one: one
    // listener tells both apart.
    res.once('close', () => {
      // An event stream (the activity stream, an agent's presence) ends when its client goes: that is its normal end, not an abort.
      const streamed =
        !res.writableFinished && String(res.getHeader('content-type') ?? '').startsWith('text/event-stream');
      const outcome = res.writableFinished ? 'request completed' : streamed ? 'stream closed' : 'request aborted';
      const level = res.statusCode >= 500 ? 'error' : outcome === 'request aborted' ? 'warn' : 'info';
      // A body the service cut to make room is told in the cuts' own line (request-bodies.ts), with its count.
      if (!logger.isLevelEnabled(level) || (outcome === 'request aborted' && wasCut(req))) return;
      logger[level](
        {
          req: {
            id: requestContext(res).requestId,
            method: req.method,
            url: pathOf(req.originalUrl),
            remoteAddress: req.socket.remoteAddress,
          },
          // No status for a request that left before its answer began: express's default 200 would say it was answered.
          res: { statusCode: res.headersSent ? res.statusCode : null },
          response_ms: Math.round(performance.now() - started),
          svc_session_id: loggableHeader(req.get('x-svc-session-id')),
          sdk_version: loggableHeader(req.get('x-svc-sdk-version')),
          client_id: loggableHeader(req.get('x-client-id')),
        },
        outcome,
      );
    });
    next();
  };
}
