import { STATUS_CODES } from 'node:http';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { HttpError } from '../http-error.js';
import { requestContext } from '../request-context.js';
import { BODY_ERRORS } from './body-errors.js';

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
