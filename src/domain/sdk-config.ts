import { createHash } from 'node:crypto';
import { stringify } from 'safe-stable-stringify';
import { z } from 'zod';
import { MAX_TIMER_SECONDS } from './timer-limit.js';

/**
 * The remote SDK configuration (docs/reference/configuration.md): defaults, the override file of docs/decisions/0007-sdk-config-overrides.md
 * (`{"*": {...}, "<client_id>": {...}}`) and the merge per tenant. Unknown keys are refused,
 * so a misspelt threshold fails loudly instead of silently keeping its default.
 */
const seconds = z.number({ error: 'must be a number' }).nonnegative({ error: 'must not be negative' });

export const SdkFeatures = z.strictObject({
  allow_multiple_assistant_prompt: z.boolean({ error: 'must be a boolean' }),
  suppress_high_time_spent_trigger: z.boolean({ error: 'must be a boolean' }),
  // Read by the Android SDK: it masks hints before sending when on (fail-closed on the client too).
  component_input_hints_masked: z.boolean({ error: 'must be a boolean' }),
  // Read by the Android SDK: whether to open the WebSocket control plane (GET /v1/events/ws).
  use_websockets_for_control_plane: z.boolean({ error: 'must be a boolean' }),
});

export const SdkThresholds = z.strictObject({
  // It becomes the cooldown timer of a session, and timers cannot wait longer than this.
  min_trigger_interval_seconds: seconds.max(MAX_TIMER_SECONDS, { error: `must be at most ${MAX_TIMER_SECONDS}` }),
  high_time_spent_seconds: seconds,
  // At most one popup per this many seconds in a session; compared as a deadline, never a timer.
  assistant_prompt_cooldown_seconds: seconds,
  // How long a failure on the current screen counts towards repeated_errors and popups.
  error_window_seconds: seconds,
});

/** A language tag, as the notice's keys and POST /v1/assistant/consent's `language` take it. */
export const LANGUAGE_TAG = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$/;

/**
 * The consent notice the voice agent gives first in a call (docs/explanation/calls.md): its version, recorded
 * with every decision, and its text per language; `en` is the fallback.
 */
export const SdkConsent = z.strictObject({
  notice_version: z
    .string({ error: 'must be a string' })
    .regex(/^[A-Za-z0-9._:-]{1,64}$/, { error: 'must be 1-64 characters of A-Za-z0-9._:-' }),
  notice: z.record(
    z.string().regex(LANGUAGE_TAG, { error: 'keys must be language tags (en, hi, ta-IN)' }),
    z.string({ error: 'must be a string' }).min(1).max(1000, { error: 'must be at most 1000 characters' }),
    { error: 'must map language tags to the notice text' },
  ),
});
export type SdkConsent = z.infer<typeof SdkConsent>;

export const SdkConfigSchema = z.object({ features: SdkFeatures, thresholds: SdkThresholds, consent: SdkConsent });
export type SdkConfig = z.infer<typeof SdkConfigSchema>;

const SdkConfigPatch = z.strictObject({
  features: SdkFeatures.partial().optional(),
  thresholds: SdkThresholds.partial().optional(),
  consent: SdkConsent.partial().optional(),
});
export type SdkConfigPatch = z.infer<typeof SdkConfigPatch>;

/** The whole override file: `"*"` for every tenant, then one entry per client id. */
export const SdkConfigOverridesSchema = z.record(
  z.string().min(1, { error: 'tenant keys must not be empty' }),
  SdkConfigPatch,
  {
    error: 'must be a JSON object mapping "*" or a client id to overrides',
  },
);
export type SdkConfigOverrides = z.infer<typeof SdkConfigOverridesSchema>;

export const ALL_TENANTS = '*';

export const DEFAULT_SDK_CONFIG: SdkConfig = {
  features: {
    allow_multiple_assistant_prompt: false,
    suppress_high_time_spent_trigger: false,
    component_input_hints_masked: true,
    use_websockets_for_control_plane: true,
  },
  thresholds: {
    min_trigger_interval_seconds: 60,
    high_time_spent_seconds: 20,
    assistant_prompt_cooldown_seconds: 45,
    error_window_seconds: 120,
  },
  consent: {
    notice_version: 'default-1',
    notice: {
      en:
        'This call is with an automated assistant that helps you with this step. With your consent, ' +
        'what we say is transcribed and kept for up to 30 days to help you and to improve the ' +
        'service; you can withdraw at any time. Shall we continue?',
      hi:
        'यह कॉल एक स्वचालित सहायक के साथ है जो इस चरण में आपकी मदद करता है। आपकी सहमति से हमारी ' +
        'बातचीत लिखी जाएगी और 30 दिनों तक रखी जाएगी; आप कभी भी सहमति वापस ले सकते हैं। क्या हम आगे ' +
        'बढ़ें?',
    },
  },
};

export const NO_OVERRIDES: SdkConfigOverrides = {};

function patchFor(overrides: SdkConfigOverrides, key: string): SdkConfigPatch | undefined {
  // Own keys only: a client id such as "constructor" must not reach Object.prototype.
  return Object.hasOwn(overrides, key) ? overrides[key] : undefined;
}

function apply(config: SdkConfig, patch: SdkConfigPatch | undefined): SdkConfig {
  if (!patch) return config;
  return {
    features: { ...config.features, ...patch.features },
    thresholds: { ...config.thresholds, ...patch.thresholds },
    // A tenant's notice replaces the texts it gives; a new text wants a new version, which it sets.
    consent: {
      notice_version: patch.consent?.notice_version ?? config.consent.notice_version,
      notice: { ...config.consent.notice, ...patch.consent?.notice },
    },
  };
}

/** Defaults, then `"*"`, then the tenant's own entry (docs/decisions/0007-sdk-config-overrides.md). */
export function mergeSdkConfig(overrides: SdkConfigOverrides, clientId: string | null | undefined): SdkConfig {
  const shared = apply(DEFAULT_SDK_CONFIG, patchFor(overrides, ALL_TENANTS));
  return clientId ? apply(shared, patchFor(overrides, clientId)) : shared;
}

/** Which entry of the file decides a tenant's config: its own, or the shared one. */
export function overrideKeyFor(overrides: SdkConfigOverrides, clientId: string | null | undefined): string {
  return clientId && patchFor(overrides, clientId) ? clientId : ALL_TENANTS;
}

/** A content hash of a merged config: equal configs share a version, any change gives a new one. */
export function sdkConfigVersion(config: SdkConfig): string {
  return createHash('sha256')
    .update(stringify(config) ?? '')
    .digest('hex')
    .slice(0, 16);
}
