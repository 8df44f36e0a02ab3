import { describe, expect, it } from 'vitest';
import { describeShape, maskValue, matchesPattern, redactHint } from '../../src/privacy/hints.js';

describe('maskValue', () => {
  it.each([
    ['9876543210', '******3210'],
    ['ABCDE1234F', '******234F'],
    ['123456789012', '********9012'],
    ['INVALIDPAN', '******DPAN'],
    ['john.doe@example.com', '****.***@*******.com'],
    ['98765-43210', '*****-*3210'],
    ['AB 12 CD 3456', '** ** ** 3456'],
    ['12345678', '****5678'],
    ['1234567', '*******'],
    ['1234', '****'],
    ['a@b.c', '*****'],
    ['', ''],
  ])('%s → %s', (raw, masked) => {
    expect(maskValue(raw)).toBe(masked);
  });
});

describe('describeShape', () => {
  it('counts length, digits and letters and checks the whole value against the pattern', () => {
    expect(describeShape('ABCDE1234F', '[A-Z]{5}[0-9]{4}[A-Z]')).toEqual({ length: 10, digits: 4, letters: 6, matches_pattern: true });
    expect(describeShape('INVALIDPAN', '[A-Z]{5}[0-9]{4}[A-Z]')).toEqual({ length: 10, digits: 0, letters: 10, matches_pattern: false });
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
      expect(redactHint({ hint: '9876543210', masked: false, componentType, pattern: undefined })?.hint).toBe('******3210');
    }
    expect(redactHint({ hint: '9876543210', masked: undefined, componentType: 'text_input', pattern: undefined })?.masked_by).toBe('server');
  });

  it('keeps choice hints and client-masked hints as sent', () => {
    for (const componentType of ['checkbox', 'switch', 'radio_button', 'dropdown', 'button', 'file_upload', 'camera', 'Checkbox']) {
      expect(redactHint({ hint: 'checked', masked: false, componentType, pattern: undefined })).toBeUndefined();
    }
    expect(redactHint({ hint: '******3210', masked: true, componentType: 'text_input', pattern: undefined })).toBeUndefined();
  });
});
