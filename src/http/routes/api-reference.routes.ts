import { createRequire } from 'node:module';
import path from 'node:path';
import { Router } from 'express';
import { z } from 'zod';
import type { RouteDoc } from '../route-doc.js';
import type { RouteModule } from '../route-module.js';

const OpenApiDocument = z.record(z.string(), z.unknown()).meta({ description: 'an OpenAPI 3.1 document' });

export const openApiRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    operationId: 'getOpenApiDocument',
    path: '/openapi.json',
    tag: 'operations',
    summary: 'This OpenAPI document',
    responses: { 200: { description: 'OpenAPI 3.1', schema: OpenApiDocument } },
  },
];

export const apiReferenceRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    operationId: 'getApiReference',
    path: '/docs',
    tag: 'operations',
    summary: 'This reference as an interactive page (Swagger UI)',
    description:
      'This reference as an interactive page (Swagger UI, served offline). Loads without a key; ' +
      '"Authorize" takes the X-API-Key that "Try it out" requests carry.',
    authenticated: false,
    responses: { 200: { description: 'the page', schema: z.string(), contentType: 'text/html' } },
  },
  {
    method: 'get',
    operationId: 'getApiReferenceDocument',
    path: '/docs/openapi.json',
    tag: 'operations',
    summary: 'The OpenAPI document /docs reads, without a key',
    description: 'The document /docs reads: the same as /openapi.json, without a key.',
    authenticated: false,
    responses: { 200: { description: 'OpenAPI 3.1', schema: OpenApiDocument } },
  },
];

const swaggerUiDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
/** Only the files the page loads; nothing else of the package is reachable. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'swagger-ui.css',
  'swagger-ui-bundle.js': 'swagger-ui-bundle.js',
  'favicon.png': 'favicon-32x32.png',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>KYC voice assistant backend: API reference</title>
<link rel="icon" type="image/png" href="/docs/assets/favicon.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="reference"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

// persistAuthorization keeps the key the user entered across reloads, in this browser only.
const INIT = `window.ui = SwaggerUIBundle({
  url: '/docs/openapi.json',
  dom_id: '#reference',
  deepLinking: true,
  persistAuthorization: true,
  displayOperationId: true,
  displayRequestDuration: true,
  defaultModelsExpandDepth: 0,
  validatorUrl: null,
});
`;

/** GET /docs and what it loads: mounted ahead of the key check, like /health. */
export function apiReferenceRoutes(document: Buffer): Router {
  const router = Router();
  router.get('/docs', (_req, res) => {
    res.type('html').send(PAGE);
  });
  router.get('/docs/init.js', (_req, res) => {
    res.type('js').send(INIT);
  });
  router.get('/docs/openapi.json', (_req, res) => {
    res.type('json').send(document);
  });
  router.get('/docs/assets/:file', (req, res, next) => {
    const file = ASSETS[req.params.file];
    if (!file) return next();
    res.sendFile(file, { root: swaggerUiDir, maxAge: '1h' });
  });
  return router;
}

/** GET /openapi.json: the document, behind the key like the rest of the API. */
export const openApiRoute: RouteModule = {
  docs: openApiRouteDocs,
  router: ({ openapi }) =>
    Router().get('/openapi.json', (_req, res) => {
      res.type('json').send(openapi);
    }),
};

export const apiReferenceRoute: RouteModule = {
  docs: apiReferenceRouteDocs,
  router: ({ openapi }) => apiReferenceRoutes(openapi),
};
