import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { HttpError } from '../http-error.js';

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

/**
 * X-API-Key against every configured key (several during a rotation). Digests have a fixed
 * length, so timingSafeEqual compares them in constant time whatever the caller sent, and
 * every key is compared so the time does not tell which one matched.
 */
export function apiKeyMatcher(keys: string[]): (presented: string) => boolean {
  const accepted = keys.map(digest);
  return (presented) => {
    const presentedDigest = digest(presented);
    let matched = false;
    for (const key of accepted) matched = timingSafeEqual(presentedDigest, key) || matched;
    return matched;
  };
}

/**
 * Whether a request carries one of the keys, for routes that answer anyone but say more to a
 * client (/health). With no keys configured no request carries one.
 */
export function keyGiven(keys: string[]): (req: Request) => boolean {
  if (keys.length === 0) return () => false;
  const matches = apiKeyMatcher(keys);
  return (req) => {
    const presented = req.get('x-api-key');
    return presented !== undefined && presented !== '' && matches(presented);
  };
}

/** `accepted` hears of each request whose key matched (its connection is then a known client's). */
export function apiKeyCheck(keys: string[], accepted: (req: Request) => void): RequestHandler | undefined {
  // No keys configured: nothing to check, so nothing mounted.
  if (keys.length === 0) return undefined;
  const matches = apiKeyMatcher(keys);
  return (req, _res, next) => {
    const presented = req.get('x-api-key');
    if (!presented) throw new HttpError(401, 'missing X-API-Key header');
    if (!matches(presented)) throw new HttpError(401, 'invalid API key');
    accepted(req);
    next();
  };
}
