import type { RequestHandler } from 'express';
import express from 'express';
import { MAX_BODY_DEPTH, tooDeepPath } from '../body-depth.js';
import { HttpError } from '../http-error.js';

export const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * JSON bodies only, 64 KiB at most, nested at most MAX_BODY_DEPTH levels. `strict: false` lets any JSON value parse so that a
 * non-object body is answered 422 by validation rather than 400 as malformed.
 */
export function jsonBody(): RequestHandler[] {
  const requireJson: RequestHandler = (req, _res, next) => {
    const hasBody = req.method === 'POST' || req.method === 'PUT' || req.method === 'PATCH';
    if (hasBody && !req.is('application/json')) {
      throw new HttpError(415, 'Content-Type must be application/json');
    }
    next();
  };
  const boundedDepth: RequestHandler = (req, _res, next) => {
    const path = tooDeepPath(req.body as unknown);
    if (path !== undefined) throw new HttpError(422, `body.${path}: nested deeper than ${MAX_BODY_DEPTH} levels`);
    next();
  };
  return [requireJson, express.json({ limit: BODY_LIMIT_BYTES, strict: false }), boundedDepth];
}
