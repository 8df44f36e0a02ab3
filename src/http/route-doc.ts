import type { z } from 'zod';

/** What the OpenAPI document says of one route; each router exports the docs of its routes. */
export interface RouteDoc {
  method: 'get' | 'post';
  path: string;
  summary: string;
  tag: string;
  body?: z.ZodType;
  query?: z.ZodObject;
  pathParams?: Record<string, string>;
  headers?: Record<string, string>;
  responses: Record<number, { description: string; schema?: z.ZodType; contentType?: string }>;
  /** false for the routes reachable without X-API-Key. */
  authenticated?: boolean;
}
