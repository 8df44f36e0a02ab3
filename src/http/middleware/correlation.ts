import type { RequestHandler } from 'express';
import { newRequestId, traceIdFromTraceparent } from '../../domain/trace.js';
import { clientSentId } from '../header-id.js';
import type { RequestContext } from '../request-context.js';

/**
 * Reads or makes the request id, echoes it, and parses `traceparent`, before anything else runs.
 * A request id that is no identifier is kept as its digest (docs/explanation/privacy.md, "What is kept"):
 * it is stored in every item it traces and echoed, and copies of one request still share it.
 */
export const correlation =
  (idDigest: (id: string) => string): RequestHandler =>
  (req, res, next) => {
    const context: RequestContext = {
      requestId: clientSentId(req.get('x-request-id'), idDigest) ?? newRequestId(),
      headerTraceId: traceIdFromTraceparent(req.get('traceparent')),
    };
    res.locals.requestContext = context;
    res.setHeader('X-Request-ID', context.requestId);
    next();
  };
