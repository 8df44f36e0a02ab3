import type { RequestHandler } from 'express';
import { HttpError } from '../http-error.js';
import { NOT_SERVED, servedHostsFor } from '../served-host.js';

/**
 * 403 for a request naming the service by a name it does not answer to (served-host.ts: DNS
 * rebinding); undefined when keys keep strangers out and ALLOWED_HOSTS is unset.
 */
export function hostGate(http: {
  apiKeys: readonly string[];
  allowedHosts: readonly string[] | undefined;
}): RequestHandler | undefined {
  const hosts = servedHostsFor(http);
  if (!hosts) return undefined;
  return (req, _res, next) => {
    if (!hosts.serves(req.headers.host)) throw new HttpError(403, NOT_SERVED);
    next();
  };
}
