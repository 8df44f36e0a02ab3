import { describe, expect, it } from 'vitest';
import { describeShape, matchesPattern, redactHint } from '../../src/privacy/hints.js';

describe('what a mask keeps (docs/explanation/privacy.md, "What a mask keeps")', () => {
  it.each([
    ['9876543210', '******3210'],
    ['98765-43210', '*****-*3210'],
    ['ABCDE1234F', '**********'],
    ['123456789012', '************'],
    ['INVALIDPAN', '**********'],
    ['john.doe@example.com', '****.***@*******.***'],
    ['AB 12 CD 3456', '** ** ** ****'],
    ['12345678', '********'],
    ['1234', '****'],
  ])('a hint %s is masked to %s: the last four only of a mobile number or an Aadhaar', (raw, masked) => {
    expect(redactHint({ hint: raw, masked: false, componentType: 'text_input', pattern: undefined })?.hint).toBe(
      masked,
    );
  });
});

describe('describeShape', () => {
  it('counts length, digits and letters and checks the whole value against the pattern', () => {
    expect(describeShape('ABCDE1234F', '[A-Z]{5}[0-9]{4}[A-Z]')).toEqual({
      length: 10,
      digits: 4,
      letters: 6,
      matches_pattern: true,
    });
    expect(describeShape('INVALIDPAN', '[A-Z]{5}[0-9]{4}[A-Z]')).toEqual({
      length: 10,
      digits: 0,
      letters: 10,
      matches_pattern: false,
    });
    expect(describeShape('98765432101', '[0-9]{10}').matches_pattern).toBe(false);
    expect(describeShape('12345', undefined)).toEqual({ length: 5, digits: 5, letters: 0 });
  });

  it('omits matches_pattern for a pattern that does not compile', () => {
    expect(describeShape('abc', '([a-z')).not.toHaveProperty('matches_pattern');
  });

  it('runs a catastrophic-backtracking pattern in linear time (RE2 semantics)', () => {
    expect(matchesPattern(`${'a'.repeat(5000)}!`, '(a+)+$')).toBe(false);
  });
});

describe('redactHint', () => {
  it('masks anything not already masked, whatever the component type, failing closed', () => {
    for (const componentType of ['text_input', 'otp_input', 'date_picker', undefined, 'TEXT_INPUT', 'signature_pad']) {
      expect(redactHint({ hint: '9876543210', masked: false, componentType, pattern: undefined })?.hint).toBe(
        '******3210',
      );
    }
    expect(
      redactHint({ hint: '9876543210', masked: undefined, componentType: 'text_input', pattern: undefined })?.masked_by,
    ).toBe('server');
  });

  it('keeps choice hints and client-masked hints as sent', () => {
    for (const componentType of [
      'checkbox',
      'switch',
      'radio_button',
      'dropdown',
      'button',
      'file_upload',
      'camera',
      'Checkbox',
    ]) {
      expect(redactHint({ hint: 'checked', masked: false, componentType, pattern: undefined })).toBeUndefined();
    }
    expect(
      redactHint({ hint: '******3210', masked: true, componentType: 'text_input', pattern: undefined }),
    ).toBeUndefined();
  });
});
