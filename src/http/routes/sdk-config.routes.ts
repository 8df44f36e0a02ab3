import { z } from 'zod';
import { Router } from 'express';
import { clientIdOf } from '../client-id.js';
import type { AppDeps } from '../deps.js';
import { ifNoneMatchHits, quotedEtag } from '../etag.js';
import { headerValue } from '../request-context.js';
import type { RouteDoc } from '../route-doc.js';
import { ClientIdHeader, clientIdParam } from '../schemas/params.schema.js';
import { ErrorBody } from '../schemas/common.schema.js';
import { SdkConfigOut } from '../schemas/sdk-config.schema.js';
import type { RouteModule } from '../route-module.js';

/** For the document: the tenant by query, for clients that cannot set X-Client-ID (the header wins). */
const SdkConfigQuery = z.object({
  client_id: ClientIdHeader.optional().describe('tenant whose overrides apply, when X-Client-ID is not sent'),
});

export const sdkConfigRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    operationId: 'getSdkConfig',
    path: '/v1/sdk/config',
    tag: 'sdk',
    summary: 'Remote SDK configuration for the calling client',
    description:
      'Remote SDK configuration: defaults, then the "*" overrides of SDK_CONFIG_FILE, then the X-Client-ID tenant\'s.',
    headers: {
      'X-Client-ID': clientIdParam('tenant whose overrides apply (or the client_id query parameter)'),
      'X-SVC-SDK-Version': {
        description: 'echoed as metadata.sdk_version',
        schema: z.string(),
        example: 'android-1.4.2',
      },
      'If-None-Match': {
        description: 'the ETag (or metadata.version) the client holds; 304 when unchanged',
        schema: z.string(),
      },
    },
    query: SdkConfigQuery,
    responses: {
      200: { description: 'merged config; ETag is the quoted version, Cache-Control no-cache', schema: SdkConfigOut },
      304: { description: 'unchanged since the version in If-None-Match; no body' },
      422: { description: 'X-Client-ID or client_id is not a plain id', schema: ErrorBody },
    },
  },
];

/** The SDK contract this backend speaks, and the version of its bundled defaults (bumped when they change). */
export const SDK_CONTRACT_VERSION = '1.0.0';
export const SDK_DEFAULTS_VERSION = '1.0.0';

export function sdkConfigRoutes({ sdkConfig, config: appConfig }: AppDeps): Router {
  const router = Router();
  router.get('/v1/sdk/config', (req, res) => {
    const clientId = clientIdOf(req);
    const { config, version } = sdkConfig.resolve(clientId);
    // no-cache: clients may keep it but must revalidate, which the ETag makes cheap.
    res.set({ ETag: quotedEtag(version), 'Cache-Control': 'no-cache' });
    if (ifNoneMatchHits(req.get('if-none-match'), version)) {
      res.status(304).end();
      return;
    }
    const sdkVersion = headerValue(req, 'x-svc-sdk-version') ?? null;
    res.json({
      ...config,
      // What the Android SDK's config manager reads at the top level.
      sdk_version: SDK_CONTRACT_VERSION,
      client_id: clientId ?? null,
      defaults_version: SDK_DEFAULTS_VERSION,
      environment: appConfig.sdk.environment,
      source: 'merged',
      metadata: { source: 'merged', version, client_id: clientId ?? null, sdk_version: sdkVersion },
    });
  });
  return router;
}

export const sdkConfigRoute: RouteModule = { docs: sdkConfigRouteDocs, router: sdkConfigRoutes };
