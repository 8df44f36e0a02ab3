import { z } from 'zod';
import { MIDDLEWARE_RESPONSES } from './middleware/documented-responses.js';
import type { ParamDoc, RouteDoc } from './route-doc.js';
import { TAGS } from './route-doc.js';
import { ErrorBody } from './schemas/common.schema.js';

type JsonSchema = Record<string, unknown>;

const REF_PREFIX = '#/components/schemas/';

export interface DocumentInfo {
  title: string;
  version: string;
  description: string;
}

/** zod puts shared definitions under the schema's own `$defs`; OpenAPI keeps them in components. */
function relocateRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(relocateRefs);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    out[key] =
      key === '$ref' && typeof value === 'string' ? value.replace('#/$defs/', REF_PREFIX) : relocateRefs(value);
  }
  return out;
}

/**
 * OpenAPI 3.1 from the same zod schemas that validate requests and type responses, so the
 * document cannot drift from the code. Schemas with a meta id become shared components.
 * The output depends only on the route docs, in their order, so the client generated from it
 * is reproducible.
 */
export function buildOpenApi(routes: RouteDoc[], info: DocumentInfo): JsonSchema {
  const components: Record<string, JsonSchema> = {};
  const convert = (schema: z.ZodType, io: 'input' | 'output'): JsonSchema => {
    const json = relocateRefs(z.toJSONSchema(schema, { io, unrepresentable: 'any' })) as JsonSchema & {
      $defs?: Record<string, JsonSchema>;
    };
    const { $defs, $schema: _ignored, id: _id, ...rest } = json;
    for (const [id, definition] of Object.entries($defs ?? {})) components[id] ??= definition;
    const id = z.globalRegistry.get(schema)?.id;
    if (typeof id === 'string') {
      components[id] ??= rest;
      return { $ref: REF_PREFIX + id };
    }
    return rest;
  };
  const parameter = (name: string, where: 'path' | 'header', doc: ParamDoc): JsonSchema => {
    const { description: _own, ...schema } = convert(doc.schema, 'input');
    return {
      name,
      in: where,
      required: where === 'path',
      description: doc.description,
      schema,
      ...(doc.example !== undefined ? { example: doc.example } : {}),
    };
  };

  const errorSchema = convert(ErrorBody, 'output');
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    for (const schema of route.components ?? []) convert(schema, 'output');
    const parameters: unknown[] = [];
    for (const [name, doc] of Object.entries(route.pathParams ?? {})) parameters.push(parameter(name, 'path', doc));
    for (const [name, schema] of Object.entries(route.query?.shape ?? {})) {
      const { description, ...converted } = convert(schema as z.ZodType, 'input');
      // Required when the schema takes no absent value (an agent's identity on its presence).
      const required = !(schema as z.ZodType).safeParse(undefined).success;
      parameters.push({ name, in: 'query', required, description, schema: route.queryOverrides?.[name] ?? converted });
    }
    for (const [name, doc] of Object.entries(route.headers ?? {})) parameters.push(parameter(name, 'header', doc));

    const responses: Record<string, unknown> = {};
    for (const [status, response] of Object.entries(route.responses)) {
      const media = {
        schema: response.schema ? convert(response.schema, 'output') : undefined,
        ...(response.example !== undefined ? { example: response.example } : {}),
      };
      responses[status] = {
        description: response.description,
        ...(response.schema ? { content: { [response.contentType ?? 'application/json']: media } } : {}),
      };
    }
    for (const middleware of MIDDLEWARE_RESPONSES) {
      if (!middleware.appliesTo(route)) continue;
      const own = responses[middleware.status] as { description: string } | undefined;
      responses[middleware.status] = {
        ...own,
        description: own ? `${own.description}; or ${middleware.description}` : middleware.description,
        ...(middleware.headers ? { headers: middleware.headers } : {}),
        content: { 'application/json': { schema: errorSchema } },
      };
    }
    const ordered = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)));

    paths[route.path] ??= {};
    paths[route.path]![route.method] = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: [route.tag],
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(route.body
        ? {
            requestBody: {
              required: true,
              content: {
                'application/json': {
                  schema: convert(route.body, 'input'),
                  ...(route.bodyExamples ? { examples: route.bodyExamples } : {}),
                },
              },
            },
          }
        : {}),
      responses: ordered,
      ...(route.authenticated === false ? { security: [] } : {}),
      ...route.extensions,
    };
  }

  return {
    openapi: '3.1.0',
    // The package is private and published under no licence; the field says so rather than staying empty.
    info: { ...info, license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' } },
    servers: [{ url: '/', description: 'the service that serves this document' }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    components: {
      schemas: Object.fromEntries(Object.entries(components).sort(([a], [b]) => a.localeCompare(b))),
      securitySchemes: {
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-Key',
          description: 'One of the keys in API_KEY; not required when API_KEY is unset.',
        },
      },
    },
    security: [{ apiKey: [] }],
    paths,
  };
}
