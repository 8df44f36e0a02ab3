import type { RequestHandler } from 'express';
import { withIdempotencyKey } from '../../cluster/idempotency.js';
import { acceptableId } from '../../domain/trace.js';
import { HttpError } from '../http-error.js';

/**
 * SESSION_HOST=restate: a request carrying `Idempotency-Key` (a client's or the load balancer's
 * retry of one it never got an answer to) reaches its session's object with that key, so Restate
 * runs the command once and answers a retry with the first answer, whichever process it reaches.
 */
export const idempotencyContext: RequestHandler = (req, _res, next) => {
  const sent = req.get('idempotency-key');
  if (sent === undefined) return next();
  const key = acceptableId(sent);
  // A key that cannot be used would make a retry apply the command twice: refuse it instead.
  if (key === undefined) throw new HttpError(422, 'Idempotency-Key: must be 1-128 characters of A-Za-z0-9._:@/+=-');
  withIdempotencyKey(key, next);
};
