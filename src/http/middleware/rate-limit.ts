import type { RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import { isLoopbackAddress } from '../../domain/loopback.js';

/**
 * Per client IP, not per API key: every SDK user of a tenant shares one key. express-rate-limit
 * sets Retry-After and the RateLimit headers; the body follows the service's `{detail}` form.
 */
export function perIpRateLimit(
  limitPerMinute: number,
  { loopback }: { loopback: boolean },
): RequestHandler | undefined {
  // Off means not mounted at all: a pass-through would still cost a router step per request.
  if (limitPerMinute === 0) return undefined;
  return rateLimit({
    windowMs: 60_000,
    limit: limitPerMinute,
    // Clients on this machine, when the configuration says they are not limited (docs/reference/limits.md).
    ...(loopback ? {} : { skip: (req) => isLoopbackAddress(req.ip) }),
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    handler: (_req, res, _next, options) => {
      res
        .status(options.statusCode)
        .json({ detail: `rate limit exceeded: at most ${limitPerMinute} requests per minute per client` });
    },
  });
}
