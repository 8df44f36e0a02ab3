import { describe, expect, it } from 'vitest';
import type { SdkConfigOverrides } from '../../src/domain/sdk-config.js';
import { DEFAULT_SDK_CONFIG, mergeSdkConfig, sdkConfigVersion } from '../../src/domain/sdk-config.js';

const overrides: SdkConfigOverrides = {
  '*': { thresholds: { min_trigger_interval_seconds: 90 } },
  kycis_demo: { features: { allow_multiple_assistant_prompt: true }, thresholds: { min_trigger_interval_seconds: 30 } },
  other: {
    thresholds: { high_time_spent_seconds: 45, assistant_prompt_cooldown_seconds: 45, error_window_seconds: 120 },
  },
};

describe('mergeSdkConfig: defaults, then "*", then the tenant', () => {
  it('gives the defaults with no overrides', () => {
    expect(mergeSdkConfig({}, 'anyone')).toEqual({
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
      consent: DEFAULT_SDK_CONFIG.consent,
    });
  });

  it("takes a tenant's consent notice text by text, with the version it sets", () => {
    const merged = mergeSdkConfig(
      { bank: { consent: { notice_version: 'bank-2', notice: { ta: 'இந்த அழைப்பு...' } } } },
      'bank',
    );
    expect(merged.consent.notice_version).toBe('bank-2');
    expect(Object.keys(merged.consent.notice).sort()).toEqual(['en', 'hi', 'ta']);
    expect(
      mergeSdkConfig({ bank: { consent: { notice_version: 'bank-2', notice: { ta: 'x' } } } }, 'other').consent,
    ).toEqual(DEFAULT_SDK_CONFIG.consent);
  });

  it('applies "*" to every tenant and the tenant entry last, key by key', () => {
    expect(mergeSdkConfig(overrides, undefined).thresholds).toEqual({
      min_trigger_interval_seconds: 90,
      high_time_spent_seconds: 20,
      assistant_prompt_cooldown_seconds: 45,
      error_window_seconds: 120,
    });
    expect(mergeSdkConfig(overrides, 'unknown_tenant')).toEqual(mergeSdkConfig(overrides, undefined));
    expect(mergeSdkConfig(overrides, 'kycis_demo')).toEqual({
      features: {
        allow_multiple_assistant_prompt: true,
        suppress_high_time_spent_trigger: false,
        component_input_hints_masked: true,
        use_websockets_for_control_plane: true,
      },
      thresholds: {
        min_trigger_interval_seconds: 30,
        high_time_spent_seconds: 20,
        assistant_prompt_cooldown_seconds: 45,
        error_window_seconds: 120,
      },
      consent: DEFAULT_SDK_CONFIG.consent,
    });
    expect(mergeSdkConfig(overrides, 'other').thresholds).toEqual({
      min_trigger_interval_seconds: 90,
      high_time_spent_seconds: 45,
      assistant_prompt_cooldown_seconds: 45,
      error_window_seconds: 120,
    });
  });

  it('matches tenants by own keys only', () => {
    expect(mergeSdkConfig(overrides, 'constructor')).toEqual(mergeSdkConfig(overrides, undefined));
    expect(mergeSdkConfig(overrides, 'KYCIS_DEMO')).toEqual(mergeSdkConfig(overrides, undefined));
  });
});

describe('sdkConfigVersion', () => {
  it('is a content hash: equal configs share it, any change moves it, key order does not', () => {
    const version = sdkConfigVersion(DEFAULT_SDK_CONFIG);
    expect(version).toMatch(/^[0-9a-f]{16}$/);
    expect(sdkConfigVersion(mergeSdkConfig({}, 'x'))).toBe(version);
    const reordered = {
      thresholds: {
        error_window_seconds: 120,
        assistant_prompt_cooldown_seconds: 45,
        high_time_spent_seconds: 20,
        min_trigger_interval_seconds: 60,
      },
      features: DEFAULT_SDK_CONFIG.features,
      consent: DEFAULT_SDK_CONFIG.consent,
    };
    expect(sdkConfigVersion(reordered)).toBe(version);
    expect(sdkConfigVersion(mergeSdkConfig(overrides, 'kycis_demo'))).not.toBe(version);
    expect(sdkConfigVersion(mergeSdkConfig(overrides, 'other'))).not.toBe(
      sdkConfigVersion(mergeSdkConfig(overrides, 'kycis_demo')),
    );
  });
});
