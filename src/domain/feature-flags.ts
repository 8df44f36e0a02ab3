/**
 * Feature flags (docs/reference/configuration.md) with the defaults of docs/decisions/0008-activity-items-and-the-stream.md;
 * FEATURE_FLAGS overrides any of them.
 */
export type FeatureFlags = Record<string, boolean>;

export function resolveFeatureFlags(mediaReady: boolean, overrides: FeatureFlags): FeatureFlags {
  return {
    'integration.media_dispatch': mediaReady,
    'trigger.v2_scoring': false,
    'integration.schema_registry': true,
    'ui.dynamic_popups': true,
    ...overrides,
  };
}
