import type { RouteDoc } from '../route-doc.js';
import { MAX_PIPELINED } from '../pipelining.js';
import { BODY_LIMIT_BYTES } from './body-errors.js';

/** A status the middleware in front of the routes can answer, and the routes it can answer it on. */
export interface MiddlewareResponse {
  status: number;
  description: string;
  appliesTo(route: RouteDoc): boolean;
  headers?: Record<string, { description: string; schema: Record<string, unknown> }>;
}

const hasJsonBody = (route: RouteDoc): boolean => route.method === 'post';
// /health is mounted ahead of the shutdown gate, the rate limit and the key check; the console
// page behind the gate, ahead of the rest.
const rateLimited = (route: RouteDoc): boolean => route.rateLimited !== false;
const shutdownGated = (route: RouteDoc): boolean => route.shutdownGated !== false;

/**
 * Kept next to the middleware (app.ts mounts it in this order) so that the document states every
 * status once, from here, rather than each route repeating them.
 */
export const MIDDLEWARE_RESPONSES: MiddlewareResponse[] = [
  { status: 400, description: 'the body is not valid JSON', appliesTo: hasJsonBody },
  {
    status: 401,
    description: 'X-API-Key is missing or not one of the configured keys (only when API_KEY is set)',
    appliesTo: (route) => route.authenticated !== false,
  },
  {
    status: 403,
    description:
      'the Host header names this service by a name it does not answer to: with no API_KEY (or ' +
      'with ALLOWED_HOSTS set), loopback names, IP addresses and ALLOWED_HOSTS only',
    appliesTo: shutdownGated,
  },
  {
    status: 408,
    description: 'the headers or the body did not arrive within REQUEST_TIMEOUT_SECONDS; the connection is closed',
    // The server's own timeouts, ahead of every route.
    appliesTo: () => true,
  },
  { status: 413, description: `the body is over ${BODY_LIMIT_BYTES / 1024} KiB`, appliesTo: hasJsonBody },
  { status: 415, description: 'Content-Type is not application/json', appliesTo: hasJsonBody },
  {
    status: 429,
    description: 'over RATE_LIMIT_PER_MINUTE requests in a minute from this client IP',
    appliesTo: rateLimited,
    headers: {
      'Retry-After': { description: 'seconds until the window resets', schema: { type: 'integer', minimum: 0 } },
    },
  },
  {
    status: 429,
    description:
      `over ${MAX_PIPELINED} requests sent on one connection before the first was answered; the ` +
      'connection is closed after this answer, and what came after it was not worked on',
    // The server's own check, ahead of every route (src/http/pipelining.ts).
    appliesTo: () => true,
  },
  { status: 503, description: 'the server is shutting down; retry on another instance', appliesTo: shutdownGated },
];
