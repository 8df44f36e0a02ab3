import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { requestContext } from '../request-context.js';

/**
 * One log line per request, written when the response is done, with the request id and the SDK's
 * correlation headers. Written here rather than with pino-http, which builds two or three child
 * loggers per request and serializes the request into each even when nothing will be logged:
 * BENCHMARKS.md has the measurement. No header is logged but these three, so no key can leak.
 */
export function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    // Health probes every few seconds would drown the log.
    if (req.path === '/health') return next();
    const started = performance.now();
    // 'close' comes after 'finish' on a completed response and alone on an aborted one: one
    // listener tells both apart.
    res.once('close', () => {
      const outcome = res.writableFinished ? 'request completed' : 'request aborted';
      const level = res.statusCode >= 500 ? 'error' : outcome === 'request aborted' ? 'warn' : 'info';
      if (!logger.isLevelEnabled(level)) return;
      logger[level](
        {
          req: { id: requestContext(res).requestId, method: req.method, url: req.originalUrl, remoteAddress: req.socket.remoteAddress },
          res: { statusCode: res.statusCode },
          responseTime: Math.round(performance.now() - started),
          svc_session_id: req.get('x-svc-session-id'),
          sdk_version: req.get('x-svc-sdk-version'),
          client_id: req.get('x-client-id'),
        },
        outcome,
      );
    });
    next();
  };
}
