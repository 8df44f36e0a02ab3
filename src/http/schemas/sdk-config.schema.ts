import { z } from 'zod';
import { SdkConsent, SdkFeatures, SdkThresholds } from '../../domain/sdk-config.js';

export const SdkConfigOut = z
  .object({
    features: SdkFeatures,
    thresholds: SdkThresholds,
    consent: SdkConsent.meta({
      description:
        'the consent notice the voice agent gives first in a call, its version and text per language (docs/explanation/calls.md)',
    }),
    sdk_version: z.string().meta({ description: 'the SDK contract version this backend speaks' }),
    client_id: z.string().nullable().meta({ description: 'the tenant whose overrides were applied after "*"' }),
    defaults_version: z.string().meta({ description: 'version of the bundled defaults' }),
    environment: z.string().meta({ description: 'SDK_ENVIRONMENT' }),
    source: z.literal('merged'),
    metadata: z.object({
      source: z.literal('merged'),
      version: z.string().meta({ description: 'content hash of the merged config; also the ETag' }),
      client_id: z.string().nullable().meta({ description: 'X-Client-ID, whose overrides were applied after "*"' }),
      sdk_version: z.string().nullable().meta({ description: 'echo of X-SVC-SDK-Version' }),
    }),
  })
  .meta({ id: 'SdkConfig' });
