import type { Request, Response } from 'express';
import type { Trace } from '../domain/activity.js';
import { newTraceId, traceIdFromTraceparent } from '../domain/trace.js';
import { clientSentId } from './header-id.js';

/** Per-request correlation, set by the request-context middleware. */
export interface RequestContext {
  requestId: string;
  /** From a valid `traceparent` header, if any. */
  headerTraceId: string | undefined;
}

export function requestContext(res: Response): RequestContext {
  return res.locals.requestContext as RequestContext;
}

export interface TraceSources {
  trace_id?: string | null | undefined;
  traceparent?: string | null | undefined;
  request_id?: string | null | undefined;
}

/** Body fields first, then the headers, then a fresh id (docs/decisions/0008-activity-items-and-the-stream.md). */
export function traceFor(res: Response, body: TraceSources = {}): Trace {
  const context = requestContext(res);
  return {
    trace_id:
      body.trace_id ?? traceIdFromTraceparent(body.traceparent ?? undefined) ?? context.headerTraceId ?? newTraceId(),
    request_id: body.request_id ?? context.requestId,
  };
}

export function headerValue(req: Request, name: string): string | undefined {
  return clientSentId(req.get(name));
}
