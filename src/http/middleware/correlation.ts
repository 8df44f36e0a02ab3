import type { RequestHandler } from 'express';
import { acceptableId, newRequestId, traceIdFromTraceparent } from '../../domain/trace.js';
import type { RequestContext } from '../request-context.js';

/** Reads or makes the request id, echoes it, and parses `traceparent`, before anything else runs. */
export const correlation: RequestHandler = (req, res, next) => {
  const context: RequestContext = {
    requestId: acceptableId(req.get('x-request-id')) ?? newRequestId(),
    headerTraceId: traceIdFromTraceparent(req.get('traceparent')),
  };
  res.locals.requestContext = context;
  res.setHeader('X-Request-ID', context.requestId);
  next();
};
