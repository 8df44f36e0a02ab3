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

let serialized: Buffer | undefined;

/**
 * The document as the bytes /openapi.json and /docs/openapi.json answer, serialized once per
 * process. /docs/openapi.json answers without a key: serialized per request, 16,000 requests from
 * 2,000 connections took 24 s of CPU (the liveness probe waited 27 s), and each connection that
 * did not read held its own copy (docs/reference/limits.md, Answers not read). One buffer, shared
 * by every answer, costs neither.
 */
export function apiDocumentJson(): Buffer {
  serialized ??= Buffer.from(JSON.stringify(apiDocument()));
  return serialized;
}
