import { z } from 'zod';
import { Router } from 'express';
import { clientIdHeader } from '../client-id.js';
import type { AppDeps } from '../deps.js';
import { ifNoneMatchHits, quotedEtag } from '../etag.js';
import { headerValue } from '../request-context.js';
import type { RouteDoc } from '../route-doc.js';
import { clientIdParam } from '../schemas/params.js';
import { ErrorBody } from '../schemas/common.js';
import { SdkConfigOut } from '../schemas/sdk-config.js';

export const sdkConfigRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    operationId: 'getSdkConfig',
    path: '/v1/sdk/config',
    tag: 'sdk',
    summary: 'Remote SDK configuration: defaults, then the "*" overrides of SDK_CONFIG_FILE, then the X-Client-ID tenant\'s.',
    headers: {
      'X-Client-ID': clientIdParam('tenant whose overrides apply'),
      'X-SVC-SDK-Version': { description: 'echoed as metadata.sdk_version', schema: z.string(), example: 'android-1.4.2' },
      'If-None-Match': { description: 'the ETag (or metadata.version) the client holds; 304 when unchanged', schema: z.string() },
    },
    responses: {
      200: { description: 'merged config; ETag is the quoted version, Cache-Control no-cache', schema: SdkConfigOut },
      304: { description: 'unchanged since the version in If-None-Match; no body' },
      422: { description: 'X-Client-ID is not a plain id', schema: ErrorBody },
    },
  },
];

export function sdkConfigRoutes({ sdkConfig }: AppDeps): Router {
  const router = Router();
  router.get('/v1/sdk/config', (req, res) => {
    const clientId = clientIdHeader(req);
    const { config, version } = sdkConfig.resolve(clientId);
    // no-cache: clients may keep it but must revalidate, which the ETag makes cheap.
    res.set({ ETag: quotedEtag(version), 'Cache-Control': 'no-cache' });
    if (ifNoneMatchHits(req.get('if-none-match'), version)) {
      res.status(304).end();
      return;
    }
    res.json({
      ...config,
      metadata: { source: 'merged', version, client_id: clientId ?? null, sdk_version: headerValue(req, 'x-svc-sdk-version') ?? null },
    });
  });
  return router;
}
