import { z } from 'zod';
import { SdkFeatures, SdkThresholds } from '../../domain/sdk-config.js';

export const SdkConfigOut = z
  .object({
    features: SdkFeatures,
    thresholds: SdkThresholds,
    metadata: z.object({
      source: z.literal('merged'),
      version: z.string().meta({ description: 'content hash of the merged config; also the ETag' }),
      client_id: z.string().nullable().meta({ description: 'X-Client-ID, whose overrides were applied after "*"' }),
      sdk_version: z.string().nullable().meta({ description: 'echo of X-SVC-SDK-Version' }),
    }),
  })
  .meta({ id: 'SdkConfig' });
