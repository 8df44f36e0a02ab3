import type { RequestHandler } from 'express';
import { newRequestId, traceIdFromTraceparent } from '../../domain/trace.js';
import { clientSentId } from '../header-id.js';
import type { RequestContext } from '../request-context.js';

/** Reads or makes the request id, echoes it, and parses `traceparent`, before anything else runs. */
export const correlation: RequestHandler = (req, res, next) => {
  const context: RequestContext = {
    // Stored in every item it traces and echoed: masked if it holds an identity value.
    requestId: clientSentId(req.get('x-request-id')) ?? newRequestId(),
    headerTraceId: traceIdFromTraceparent(req.get('traceparent')),
  };
  res.locals.requestContext = context;
  res.setHeader('X-Request-ID', context.requestId);
  next();
};
