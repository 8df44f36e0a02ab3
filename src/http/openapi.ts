import { z } from 'zod';
import type { RouteDoc } from './route-doc.js';

type JsonSchema = Record<string, unknown>;

const REF_PREFIX = '#/components/schemas/';

/** zod puts shared definitions under the schema's own `$defs`; OpenAPI keeps them in components. */
function relocateRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(relocateRefs);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    out[key] = key === '$ref' && typeof value === 'string' ? value.replace('#/$defs/', REF_PREFIX) : relocateRefs(value);
  }
  return out;
}

/**
 * OpenAPI 3.1 from the same zod schemas that validate requests and type responses, so the
 * document cannot drift from the code. Schemas with a meta id become shared components.
 */
export function buildOpenApi(routes: RouteDoc[], info: { title: string; version: string; description: string }): JsonSchema {
  const components: Record<string, JsonSchema> = {};
  const convert = (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
    const json = relocateRefs(z.toJSONSchema(schema, { io, unrepresentable: 'any' })) as JsonSchema & { $defs?: Record<string, JsonSchema> };
    const { $defs, $schema: _ignored, id: _id, ...rest } = json;
    for (const [id, definition] of Object.entries($defs ?? {})) components[id] ??= definition;
    const id = z.globalRegistry.get(schema)?.id;
    if (typeof id === 'string') {
      components[id] ??= rest;
      return { $ref: REF_PREFIX + id };
    }
    return rest;
  };

  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const parameters: unknown[] = [];
    for (const [name, description] of Object.entries(route.pathParams ?? {})) {
      parameters.push({ name, in: 'path', required: true, description, schema: { type: 'string' } });
    }
    for (const [name, schema] of Object.entries(route.query?.shape ?? {})) {
      const converted = convert(schema as z.ZodType, 'input');
      parameters.push({ name, in: 'query', required: false, description: converted.description, schema: converted });
    }
    for (const [name, description] of Object.entries(route.headers ?? {})) {
      parameters.push({ name, in: 'header', required: false, description, schema: { type: 'string' } });
    }
    const responses: Record<string, unknown> = {};
    for (const [status, response] of Object.entries(route.responses)) {
      responses[status] = {
        description: response.description,
        ...(response.schema ? { content: { [response.contentType ?? 'application/json']: { schema: convert(response.schema, 'output') } } } : {}),
      };
    }
    paths[route.path] ??= {};
    paths[route.path]![route.method] = {
      summary: route.summary,
      tags: [route.tag],
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: convert(route.body, 'input') } } } } : {}),
      responses,
      ...(route.authenticated === false ? { security: [] } : {}),
    };
  }

  return {
    openapi: '3.1.0',
    info,
    components: {
      schemas: components,
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } },
    },
    security: [{ apiKey: [] }],
    paths,
  };
}
