import { STATUS_CODES } from 'node:http';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { HttpError } from '../http-error.js';
import { requestContext } from '../request-context.js';
import { BODY_LIMIT_BYTES } from './json-body.js';

/** body-parser's error types, answered in our words: its own messages quote the raw body. */
const BODY_ERRORS: Record<string, { status: number; detail: string }> = {
  'entity.parse.failed': { status: 400, detail: 'malformed JSON body' },
  'entity.too.large': { status: 413, detail: `request body exceeds ${BODY_LIMIT_BYTES / 1024} KiB` },
  'encoding.unsupported': { status: 415, detail: 'unsupported Content-Encoding' },
  'charset.unsupported': { status: 415, detail: 'unsupported charset; send UTF-8 JSON' },
  'request.aborted': { status: 400, detail: 'request body was aborted' },
  'request.size.invalid': { status: 400, detail: 'request body length does not match Content-Length' },
};

interface ErrorWithType {
  type?: unknown;
  status?: unknown;
}

export const notFound: RequestHandler = (req) => {
  throw new HttpError(404, `no route for ${req.method} ${req.path}`);
};

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    let status = 500;
    let detail = 'internal server error';
    let headers: Record<string, string> = {};
    const typed = (error ?? {}) as ErrorWithType;
    if (error instanceof HttpError) {
      ({ status, detail, headers } = error);
    } else if (typeof typed.type === 'string' && BODY_ERRORS[typed.type]) {
      ({ status, detail } = BODY_ERRORS[typed.type]!);
    } else if (typeof typed.status === 'number' && typed.status >= 400 && typed.status < 500) {
      status = typed.status;
      detail = STATUS_CODES[status]?.toLowerCase() ?? 'bad request';
    } else {
      logger.error({ err: error, request_id: requestContext(res)?.requestId, path: req.path }, 'unhandled error');
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.set(headers).status(status).json({ detail });
  };
}
