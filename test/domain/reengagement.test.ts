import { describe, expect, it } from 'vitest';
import type { Dropoff } from '../../src/domain/dropoff.js';
import { evaluateReengagement } from '../../src/domain/reengagement.js';

const facts = {
  now: 1_000_000,
  lastUserActivityAt: 1_000_000,
  voiceActive: false,
  hadVoiceSession: true,
  inactivityThresholdSeconds: 300,
};

describe('evaluateReengagement', () => {
  it('recommends voice once inactivity reaches the threshold after a voice session, naming the minutes', () => {
    expect(evaluateReengagement({ ...facts, now: facts.now + 299_999 })).toEqual({
      recommended: false,
      channel: 'voice',
      reason: 'user_active',
      inactivity_seconds: 299,
    });
    expect(evaluateReengagement({ ...facts, now: facts.now + 300_000 })).toEqual({
      recommended: true,
      channel: 'voice',
      reason: 'user_inactive_5min',
      inactivity_seconds: 300,
    });
    expect(evaluateReengagement({ ...facts, now: facts.now + 7_259_000 }).reason).toBe('user_inactive_120min');
  });

  it('never while voice is active, and never for a session that had no voice session', () => {
    const long = { ...facts, now: facts.now + 3_600_000 };
    expect(evaluateReengagement({ ...long, voiceActive: true })).toMatchObject({
      recommended: false,
      reason: 'assistant_active',
      inactivity_seconds: 3600,
    });
    expect(evaluateReengagement({ ...long, hadVoiceSession: false })).toMatchObject({
      recommended: false,
      reason: 'user_active',
    });
  });

  it('counts whole seconds and never a negative inactivity', () => {
    expect(evaluateReengagement({ ...facts, now: facts.now + 1_999 }).inactivity_seconds).toBe(1);
    expect(evaluateReengagement({ ...facts, now: facts.now - 5_000 }).inactivity_seconds).toBe(0);
  });

  it('a call back owed (the agent said nobody was free) is recommended at once after the call, by phone when a drop-off left a dialable number', () => {
    const owed = { ...facts, now: facts.now + 1_000, callbackOwedAt: facts.now - 5_000 };
    expect(evaluateReengagement(owed)).toEqual({
      recommended: true,
      channel: 'voice',
      reason: 'handoff_unanswered',
      inactivity_seconds: 1,
    });
    expect(evaluateReengagement({ ...owed, voiceActive: true })).toMatchObject({
      recommended: false,
      reason: 'assistant_active',
    });
    const dropoff: Dropoff = { registered_at: facts.now, has_dialable_phone: true, phone_last4: '3210', reason: null };
    expect(evaluateReengagement({ ...owed, dropoff })).toMatchObject({
      recommended: true,
      channel: 'phone',
      reason: 'handoff_unanswered',
    });
    expect(evaluateReengagement({ ...owed, callbackOwedAt: null })).toMatchObject({
      recommended: false,
      reason: 'user_active',
    });
  });
});
