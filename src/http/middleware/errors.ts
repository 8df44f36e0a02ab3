import { STATUS_CODES } from 'node:http';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { DependencyUnavailableError } from '../../actor-system/session-host.js';
import { dependencyUnavailable } from '../ask.js';
import { HttpError } from '../http-error.js';
import { shownPath } from '../shown-path.js';
import { requestContext } from '../request-context.js';
import { BODY_ERRORS } from './body-errors.js';

interface ErrorWithType {
  type?: unknown;
  status?: unknown;
}

export const notFound: RequestHandler = (req) => {
  // The path is the client's text: a segment may be an identity value.
  throw new HttpError(404, `no route for ${req.method} ${shownPath(req.path)}`);
};

/** zlib's codes for input that is not what its Content-Encoding says: `Z_…` (gzip, deflate), `ERR__ERROR_FORMAT_…` (brotli), `ZSTD_error_…` (zstd). */
const isDecompressionCode = (code: string): boolean =>
  code.startsWith('Z_') || code.startsWith('ERR__ERROR_FORMAT') || code.startsWith('ZSTD_');

/** A 4xx from express or body-parser, named in our words (theirs may quote the client's input). */
function clientErrorDetail(error: unknown): string | undefined {
  if (error instanceof URIError) return 'path: not valid percent-encoding';
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && isDecompressionCode(code))
    return 'body could not be decompressed as its Content-Encoding says';
  return undefined;
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    let status = 500;
    let detail = 'internal server error';
    let headers: Record<string, string> = {};
    const typed = (error ?? {}) as ErrorWithType;
    if (error instanceof DependencyUnavailableError)
      error = dependencyUnavailable(error.dependency, 'nothing could be read');
    if (error instanceof HttpError) {
      ({ status, detail, headers } = error);
    } else if (typeof typed.type === 'string' && BODY_ERRORS[typed.type]) {
      ({ status, detail } = BODY_ERRORS[typed.type]!);
    } else if (typeof typed.status === 'number' && typed.status >= 400 && typed.status < 500) {
      status = typed.status;
      detail = clientErrorDetail(error) ?? STATUS_CODES[status]?.toLowerCase() ?? 'bad request';
    } else {
      logger.error({ err: error, request_id: requestContext(res)?.requestId, path: req.path }, 'unhandled error');
    }
    // Its connection gone (the client left, or the service cut it), an answer would go nowhere:
    // building one for each of a flood's cut connections cost more than the cut itself.
    if (res.headersSent || req.socket.destroyed) {
      res.destroy();
      return;
    }
    res.set(headers).status(status).json({ detail });
  };
}
