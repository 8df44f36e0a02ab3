import type { RequestHandler } from 'express';

/**
 * Handlers run one after another as one middleware layer: each calls the next as express would,
 * and an error (or a handler that answers without calling on) stops the sequence there. Every
 * request passes through the service's own front middleware; as separate `app.use` layers, each
 * would cost the router an allocation and its walk again (docs/decisions/0014-nothing-outlives-the-young-generation.md).
 */
export function inSequence(...handlers: RequestHandler[]): RequestHandler {
  return handlers.reduceRight<RequestHandler>(
    (rest, handler) => (req, res, next) =>
      handler(req, res, (error?: unknown) => (error === undefined ? rest(req, res, next) : next(error))),
    (_req, _res, next) => next(),
  );
}
