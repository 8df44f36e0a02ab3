import { buildOpenApi } from './openapi.js';
import type { RouteDoc } from './route-doc.js';
import { ROUTES } from './route-list.js';

/** Every route the service answers, in the order the reference lists them. */
export const ROUTE_DOCS: RouteDoc[] = ROUTES.flatMap((module) => module.docs);

let built: Readonly<Record<string, unknown>> | undefined;

/**
 * The OpenAPI document; it depends on nothing but the code, so the client can be generated from it
 * offline, and it is built once per process: every app serves the same one.
 */
export function apiDocument(): Readonly<Record<string, unknown>> {
  built ??= buildOpenApi(ROUTE_DOCS, {
    title: 'KYC voice assistant backend',
    version: '1',
    description:
      'SDK event ingestion, live sessions, voice sessions, agent context and activity. Errors ' +
      'answer `{"detail": "..."}` naming the problem. When API_KEY is set every route but ' +
      '/health, /docs and /docs/openapi.json needs `X-API-Key`.',
  });
  return built;
}
