import { describe, expect, it } from 'vitest';
import type { TriggerDecision } from '../../src/domain/trigger-policy.js';
import { NO_TRIGGER } from '../../src/domain/trigger-policy.js';
import type { SuppressionFacts } from '../../src/domain/trigger-suppression.js';
import {
  MAX_PROMPTED_SCREENS,
  newTriggerMemory,
  rememberPrompt,
  suppressTrigger,
  wasPrompted,
} from '../../src/domain/trigger-suppression.js';

const fired: TriggerDecision = {
  trigger: true,
  reason: 'repeated_errors',
  action: 'start_voice_agent',
  intervention_mode: 'voice_offer',
};
const none: SuppressionFacts = { assistantActive: false, cooldownRemainingMs: undefined, alreadyPrompted: false };

describe('suppressTrigger: precedence', () => {
  it.each<[string, Partial<SuppressionFacts>, string]>([
    ['nothing holds it back', {}, 'repeated_errors'],
    ['assistant active', { assistantActive: true }, 'assistant_active'],
    ['cooling down', { cooldownRemainingMs: 30_000 }, 'cooldown'],
    ['already prompted', { alreadyPrompted: true }, 'already_prompted'],
    ['active and cooling down', { assistantActive: true, cooldownRemainingMs: 30_000 }, 'assistant_active'],
    ['active and prompted', { assistantActive: true, alreadyPrompted: true }, 'assistant_active'],
    ['cooling down and prompted', { cooldownRemainingMs: 30_000, alreadyPrompted: true }, 'cooldown'],
    ['all three', { assistantActive: true, cooldownRemainingMs: 1, alreadyPrompted: true }, 'assistant_active'],
  ])('%s → %s', (_name, facts, reason) => {
    expect(suppressTrigger(fired, { ...none, ...facts }).reason).toBe(reason);
  });

  it('a suppressed answer does not fire and names the rule that matched', () => {
    expect(suppressTrigger(fired, { ...none, alreadyPrompted: true })).toEqual({
      trigger: false,
      reason: 'already_prompted',
      action: 'none',
      intervention_mode: 'none',
      suppressed_reason: 'repeated_errors',
    });
  });

  it.each([
    [60_000, 60],
    [59_001, 60],
    [59_000, 59],
    [1, 1],
    [0, 1],
  ])('cooldown with %i ms left → retry_after_seconds %i', (remaining, seconds) => {
    expect(suppressTrigger(fired, { ...none, cooldownRemainingMs: remaining })).toMatchObject({
      reason: 'cooldown',
      retry_after_seconds: seconds,
    });
  });

  it('nothing matched means nothing to suppress', () => {
    expect(
      suppressTrigger(NO_TRIGGER, { assistantActive: true, cooldownRemainingMs: 5000, alreadyPrompted: true }),
    ).toEqual(NO_TRIGGER);
  });
});

describe('trigger memory', () => {
  it('remembers prompted screens case-insensitively, an unknown screen included', () => {
    const memory = rememberPrompt(
      rememberPrompt(newTriggerMemory(), 'PAN_DETAILS', 1000, 60_000),
      undefined,
      2000,
      60_000,
    );
    expect(wasPrompted(memory, 'pan_details')).toBe(true);
    expect(wasPrompted(memory, null)).toBe(true);
    expect(wasPrompted(memory, 'phone_otp')).toBe(false);
    expect(memory.cooldown_until).toBe(62_000);
    expect(rememberPrompt(memory, 'x', 3000, 0).cooldown_until).toBeNull();
  });

  it(`keeps at most ${MAX_PROMPTED_SCREENS} screens, dropping the oldest`, () => {
    let memory = newTriggerMemory();
    for (let i = 0; i <= MAX_PROMPTED_SCREENS; i += 1) memory = rememberPrompt(memory, `screen_${i}`, i, 0);
    expect(memory.prompted_screens).toHaveLength(MAX_PROMPTED_SCREENS);
    expect(wasPrompted(memory, 'screen_0')).toBe(false);
    expect(wasPrompted(memory, `screen_${MAX_PROMPTED_SCREENS}`)).toBe(true);
  });
});
