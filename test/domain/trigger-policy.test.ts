import { describe, expect, it } from 'vitest';
import { DEFAULT_CRITICAL_STEPS, criticalStepKeys } from '../../src/domain/critical-steps.js';
import type { RegisteredSchema } from '../../src/domain/screen-schema.js';
import type { SdkConfig } from '../../src/domain/sdk-config.js';
import { DEFAULT_SDK_CONFIG } from '../../src/domain/sdk-config.js';
import type { TriggerPolicy, TriggerSignals } from '../../src/domain/trigger-policy.js';
import { NO_TRIGGER, evaluateTriggerPolicy } from '../../src/domain/trigger-policy.js';

const policy = (overrides: Partial<TriggerPolicy> = {}): TriggerPolicy => ({
  config: DEFAULT_SDK_CONFIG,
  criticalSteps: criticalStepKeys(DEFAULT_CRITICAL_STEPS),
  ...overrides,
});

const withConfig = (
  features: Partial<SdkConfig['features']>,
  thresholds: Partial<SdkConfig['thresholds']> = {},
): SdkConfig => ({
  features: { ...DEFAULT_SDK_CONFIG.features, ...features },
  thresholds: { ...DEFAULT_SDK_CONFIG.thresholds, ...thresholds },
  consent: DEFAULT_SDK_CONFIG.consent,
});

const reasonOf = (signals: TriggerSignals, p: TriggerPolicy = policy()) => evaluateTriggerPolicy(signals, p).reason;

describe('evaluateTriggerPolicy: the rules of docs/explanation/trigger-policy.md at their boundaries', () => {
  it.each<[string, TriggerSignals, string]>([
    ['time_spent 20 s is not more than 20', { time_spent: 20 }, 'none'],
    ['time_spent 20.5 s is', { time_spent: 20.5 }, 'high_time_spent'],
    ['time_spent 21 s is', { time_spent: 21 }, 'high_time_spent'],
    ['1 error', { errors: ['pan_invalid'] }, 'none'],
    ['2 errors', { errors: ['pan_invalid', 'pan_invalid'] }, 'repeated_errors'],
    ['no errors', { errors: [] }, 'none'],
    ['idle 12 s on a critical step', { screen: 'pan_details', idle_seconds: 12 }, 'none'],
    ['idle 13 s on a critical step', { screen: 'pan_details', idle_seconds: 13 }, 'idle_on_critical_step'],
    ['idle 13 s on a non-critical step', { screen: 'phone_entry', idle_seconds: 13 }, 'none'],
    ['idle 13 s with no screen', { idle_seconds: 13 }, 'none'],
    ['upper-case screen id', { screen: 'PAN_DETAILS', idle_seconds: 13 }, 'idle_on_critical_step'],
    ['legacy n_ prefix', { screen: 'n_pan_details', idle_seconds: 13 }, 'idle_on_critical_step'],
    ['legacy new_ prefix, upper case', { screen: 'NEW_PAN_DETAILS', idle_seconds: 13 }, 'idle_on_critical_step'],
    ['mixed-case screen id', { screen: 'Selfie_Capture', idle_seconds: 600 }, 'idle_on_critical_step'],
    ['no signals', {}, 'none'],
  ])('%s → %s', (_name, signals, reason) => {
    expect(reasonOf(signals)).toBe(reason);
  });

  it.each(DEFAULT_CRITICAL_STEPS)('%s is critical by default', (screen) => {
    expect(reasonOf({ screen, idle_seconds: 13 })).toBe('idle_on_critical_step');
  });

  it('when several rules match, the first in spec order wins', () => {
    const all = { screen: 'pan_details', time_spent: 30, errors: ['a', 'b'], idle_seconds: 30 };
    expect(reasonOf(all)).toBe('high_time_spent');
    expect(reasonOf({ ...all, time_spent: 5 })).toBe('repeated_errors');
    expect(reasonOf({ ...all, time_spent: 5, errors: [] })).toBe('idle_on_critical_step');
  });

  it('a firing answer offers voice; no match answers none everywhere', () => {
    expect(evaluateTriggerPolicy({ time_spent: 21 }, policy())).toEqual({
      trigger: true,
      reason: 'high_time_spent',
      action: 'start_voice_agent',
      intervention_mode: 'voice_offer',
    });
    expect(evaluateTriggerPolicy({ time_spent: 1 }, policy())).toEqual({
      trigger: false,
      reason: 'none',
      action: 'none',
      intervention_mode: 'none',
    });
    expect(NO_TRIGGER.trigger).toBe(false);
  });
});

describe("evaluateTriggerPolicy: the tenant's config", () => {
  it('takes the time threshold from high_time_spent_seconds', () => {
    const config = withConfig({}, { high_time_spent_seconds: 45 });
    expect(reasonOf({ time_spent: 45 }, policy({ config }))).toBe('none');
    expect(reasonOf({ time_spent: 46 }, policy({ config }))).toBe('high_time_spent');
    expect(reasonOf({ time_spent: 1 }, policy({ config: withConfig({}, { high_time_spent_seconds: 0 }) }))).toBe(
      'high_time_spent',
    );
  });

  it('skips the time rule when suppress_high_time_spent_trigger is on, and lets the next rule answer', () => {
    const config = withConfig({ suppress_high_time_spent_trigger: true });
    expect(reasonOf({ time_spent: 1000 }, policy({ config }))).toBe('none');
    expect(reasonOf({ time_spent: 1000, errors: ['a', 'b'] }, policy({ config }))).toBe('repeated_errors');
  });
});

describe('evaluateTriggerPolicy: critical steps', () => {
  it('uses the configured list instead of the defaults', () => {
    const criticalSteps = criticalStepKeys(['Phone_Entry']);
    expect(reasonOf({ screen: 'PHONE_ENTRY', idle_seconds: 13 }, policy({ criticalSteps }))).toBe(
      'idle_on_critical_step',
    );
    expect(reasonOf({ screen: 'pan_details', idle_seconds: 13 }, policy({ criticalSteps }))).toBe('none');
  });

  it('counts a screen whose registered schema says critical: true, whatever the case', () => {
    const schema = (screen: string, critical: boolean): RegisteredSchema => ({
      screen_id: screen,
      schema_hash: 'h',
      bytes: 2,
      schema: {},
      patterns: {},
      critical,
    });
    const schemas = { review_summary: schema('Review_Summary', true), phone_entry: schema('phone_entry', false) };
    expect(reasonOf({ screen: 'REVIEW_SUMMARY', idle_seconds: 13 }, policy({ schemas }))).toBe('idle_on_critical_step');
    expect(reasonOf({ screen: 'phone_entry', idle_seconds: 13 }, policy({ schemas }))).toBe('none');
    expect(reasonOf({ screen: 'constructor', idle_seconds: 13 }, policy({ schemas }))).toBe('none');
  });
});
