/** What GET /v1/sdk/config answers the apps beyond its defaults: the override file and the environment's name. */
import { z } from 'zod';
import { optionalText } from './env-values.js';

export const sdkEnv = z.object({
  SDK_CONFIG_FILE: optionalText,
  SDK_ENVIRONMENT: z
    .string()
    .regex(/^[a-z0-9_-]{1,32}$/, { error: 'must be 1-32 characters of a-z0-9_-' })
    .default('production'),
});

export interface SdkSection {
  /** JSON file of SDK-config overrides, validated and watched by the SDK config source. */
  configFile: string | undefined;
  /** Reported to SDKs as `environment` in GET /v1/sdk/config. */
  environment: string;
}

export function sdkSection(e: z.infer<typeof sdkEnv>): SdkSection {
  return { configFile: e.SDK_CONFIG_FILE, environment: e.SDK_ENVIRONMENT };
}
