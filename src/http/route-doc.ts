import type { z } from 'zod';

/** The tags of the document, each with the description the reference shows above its operations. */
export const TAGS = {
  sdk:
    'Called by the field SDKs (web, Android, React Native) and the voice agent: events, trigger ' +
    'decisions, voice sessions, agent context, remote configuration.',
  operations:
    'For operators, dashboards and tools: activity feed and stream, live sessions, feature flags, reengagement, health and this document.',
} as const;

export type Tag = keyof typeof TAGS;

/** A path or header parameter: the zod schema carries the pattern and bounds the service enforces. */
export interface ParamDoc {
  description: string;
  schema: z.ZodType;
  example?: string;
}

/**
 * What the OpenAPI document says of one route; each router exports the docs of its routes.
 * The statuses the middleware answers (401, 408, 429, 400/413/415 on bodies, 503 on shutdown) are
 * added by the document builder; `responses` holds the route's own.
 */
export interface RouteDoc {
  /** Verb-first camelCase, unique and stable: the typed client and other generators name calls by it. */
  operationId: string;
  method: 'get' | 'post' | 'delete';
  path: string;
  /**
   * A phrase of at most 80 characters and no full stop: the reference shows it on the operation's
   * line, which wraps past that (test/api/openapi-lint.test.ts). What more there is to say goes in
   * `description`.
   */
  summary: string;
  description?: string;
  tag: Tag;
  body?: z.ZodType;
  /** Named request examples; the first is the one the reference fills in for "try it". */
  bodyExamples?: Record<string, { summary: string; value: unknown }>;
  query?: z.ZodObject;
  /** What each query parameter's JSON Schema should say where the zod input type cannot (strings parsed to numbers). */
  queryOverrides?: Record<string, Record<string, unknown>>;
  pathParams?: Record<string, ParamDoc>;
  headers?: Record<string, ParamDoc>;
  responses: Record<number, { description: string; schema?: z.ZodType; contentType?: string; example?: unknown }>;
  /** false for the routes reachable without X-API-Key. */
  authenticated?: boolean;
  /** false for the routes mounted before the rate limit. */
  rateLimited?: boolean;
  /** false for the routes mounted before the shutdown gate (they answer while shutting down). */
  shutdownGated?: boolean;
  /** Shared schemas the route names only by reference (`contentSchema` of streamed data), so the document carries them. */
  components?: z.ZodType[];
  /** Vendor extensions (`x-…`), e.g. the shape of streamed messages. */
  extensions?: Record<`x-${string}`, unknown>;
}
