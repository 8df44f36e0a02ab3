import type { RequestHandler } from 'express';
import express from 'express';
import { HttpError } from '../http-error.js';

export const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * JSON bodies only, 64 KiB at most. `strict: false` lets any JSON value parse so that a
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
  return [requireJson, express.json({ limit: BODY_LIMIT_BYTES, strict: false })];
}
