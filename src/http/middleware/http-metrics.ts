import type { RequestHandler } from 'express';
import type { ServiceMetrics } from '../../metrics/service-metrics.js';

/** Label for requests no route matched (404s, static assets): raw paths would make a series per URL. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * Times every request into the HTTP histogram, labelled by the route template that answered it.
 * A `performance.now()` pair rather than prom-client's `startTimer` (two `hrtime` arrays, two
 * closures and a merged label object a request), as the actor step's timer does.
 */
export function httpMetrics(metrics: ServiceMetrics): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    res.once('close', () => {
      const template = (req.route as { path?: unknown } | undefined)?.path;
      const route =
        typeof template === 'string'
          ? template
          : typeof res.locals.route === 'string'
            ? res.locals.route
            : UNMATCHED_ROUTE;
      metrics.httpRequestDuration.observe(
        { route, method: req.method, status: String(res.statusCode) },
        (performance.now() - started) / 1000,
      );
    });
    next();
  };
}
