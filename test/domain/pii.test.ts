import { describe, expect, it } from 'vitest';
import { verhoeffValid } from '../../src/privacy/check-digits.js';
import { MAX_SCAN_CHARS } from '../../src/privacy/limits.js';
import { createPiiRules } from '../../src/privacy/rules.js';
import { maskKeyed, scrubText } from '../../src/privacy/scrub.js';
import { redactHint } from '../../src/privacy/hints.js';
import { NEAR_MISSES, withVerhoeff } from '../support/identity-values.js';

const kindOf = (text: string) => scrubText(text).findings.map((finding) => finding.kind);

describe('the default-deny rule (docs/explanation/privacy.md, "The rule")', () => {
  it.each([
    ['ABCDE1234F', 'pan', '**********'],
    ['abcde1234f', 'pan', '**********'],
    ['9876543210', 'phone', '******3210'],
    ['+91 98765 43210', 'phone', '+** ***** *3210'],
    ['09876543210', 'phone', '*******3210'],
    ['jane.doe@example.com', 'email', '****.***@*******.***'],
    ['1995-06-15', 'date', '****-**-**'],
    ['15/06/1995', 'date', '**/**/****'],
    ['15 Jun 1995', 'date', '** *** ****'],
    ['SBIN0001234', 'ifsc', '***********'],
    ['J1234567', 'passport', '********'],
    ['ABC1234567', 'voter_id', '**********'],
    ['123456789012345', 'number', '***************'],
  ])(
    '%s reads as %s and is masked to %s: only a mobile number or an Aadhaar keeps its last four',
    (raw, kind, masked) => {
      const result = scrubText(raw);
      expect(result.whole).toBe(kind);
      expect(result.text).toBe(masked);
    },
  );

  it('tells an Aadhaar number from a random 12-digit one by its Verhoeff check digit, with or without separators', () => {
    const aadhaar = withVerhoeff('23456789012');
    expect(verhoeffValid(aadhaar)).toBe(true);
    const wrong = `${aadhaar.slice(0, 11)}${(Number(aadhaar[11]) + 1) % 10}`;
    expect(verhoeffValid(wrong)).toBe(false);
    expect(kindOf(aadhaar)).toEqual(['aadhaar']);
    expect(kindOf(`${aadhaar.slice(0, 4)} ${aadhaar.slice(4, 8)} ${aadhaar.slice(8)}`)).toEqual(['aadhaar']);
    expect(kindOf(`${aadhaar.slice(0, 4)}-${aadhaar.slice(4, 8)}-${aadhaar.slice(8)}`)).toEqual(['aadhaar']);
    // Still masked (fail closed), as the long number it is, and with nothing kept.
    expect(kindOf(wrong)).toEqual(['number']);
    expect(scrubText(wrong).text).toBe('************');
    expect(scrubText(aadhaar).text).toBe(`********${aadhaar.slice(8)}`);
  });

  it('finds values inside free text and leaves the words around them readable', () => {
    const result = scrubText('my PAN is ABCDE1234F and my phone 9876543210, mail me at a.b@x.in');
    expect(result.text).toBe('my PAN is ********** and my phone ******3210, mail me at *.*@*.**');
    expect(result.findings.map((finding) => finding.kind).sort()).toEqual(['email', 'pan', 'phone']);
    expect(result.whole).toBeUndefined();
  });

  it('reads digits of Indian scripts and fullwidth digits as digits', () => {
    expect(kindOf('९८७६५४३२१०')).toEqual(['phone']);
    expect(kindOf('９８７６５４３２１０')).toEqual(['phone']);
    expect(scrubText('९८७६५४३२१०').text).toBe('******3210');
  });

  it('masks any four digits or more across separators, with or without the word OTP, and short codes after a code label', () => {
    for (const text of [
      '482913',
      'my otp is 482-913',
      'OTP 5.9.3.1.2.7',
      'the code I received is 731946',
      'sent me 6621',
      'nine_eight_seven_six',
      'ninetyeight seventysix',
    ])
      expect(scrubText(text).text, text).not.toMatch(/\d{2}|nine|eight|seven|six|ninety|seventy/);
    expect(scrubText('cvv 123').text).toBe('cvv ***');
    // Three digits or fewer alone say nothing.
    expect(scrubText('step 2 of 3, 45 left').text).toBe('step 2 of 3, 45 left');
  });

  it('leaves the ids of the field SDKs readable: screens, components, rules, failure codes, flows', () => {
    for (const id of [
      ...NEAR_MISSES,
      '412c65baef16284c',
      '7664f88e-4980-41c3-bec0-f0e1591ee548',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      'v1',
    ]) {
      expect(scrubText(id), id).toEqual({ text: id, findings: [], whole: undefined });
    }
  });

  it('drops a string too long to scan, with a marker, rather than keeping it raw', () => {
    const long = `${'x'.repeat(MAX_SCAN_CHARS)} ABCDE1234F`;
    expect(scrubText(long)).toMatchObject({ text: `[dropped: ${long.length} chars]`, whole: 'dropped' });
    expect(scrubText('x'.repeat(MAX_SCAN_CHARS)).text).toBe('x'.repeat(MAX_SCAN_CHARS));
  });
});

describe('key rules', () => {
  it('is an exact list across snake_case, kebab-case and camelCase, not a substring match', () => {
    const rules = createPiiRules();
    for (const key of [
      'phone',
      'PHONE',
      'mobile_number',
      'mobileNumber',
      'mobile-number',
      'email',
      'pan',
      'aadhaar',
      'dob',
      'otp',
      'account_number',
      'accountNumber',
      'full_name',
      'fullName',
      'father_name',
      'address',
      'value',
      'input_value',
      'inputValue',
      'raw',
      'transcript',
    ]) {
      expect(rules.isSensitiveKey(key), key).toBe(true);
    }
    // Any key whose words say identity, in any case and separator: `otpInput`, `enterOtp`, `upi_pin`, `atmPin`.
    for (const key of [
      'otpInput',
      'enterOtp',
      'otpValue',
      'upi_pin',
      'atm_pin',
      'mpin',
      'cvv',
      'cardNumber',
      'account_type',
      'residential_address',
      'phone_field',
      'email_otp',
    ]) {
      expect(rules.isSensitiveKey(key), key).toBe(true);
    }
    for (const key of [
      'display_name',
      'component_id',
      'screen_name',
      'screen',
      'pan_details',
      'error_code',
      'validation_rule_id',
      'flow_key',
      'event_name',
      'values',
      'step',
      'footprint',
      'spinner',
      'shipping',
    ]) {
      expect(rules.isSensitiveKey(key), key).toBe(false);
    }
  });

  it('answers everything the pass asks of a key at once, remembering field names but not keys longer than any', () => {
    const rules = createPiiRules(['employee_code']);
    expect(rules.keyFacts('employeeCode')).toEqual({
      routing: false,
      sensitive: true,
      mayHoldIdentity: false,
      identifierField: false,
    });
    expect(rules.keyFacts('session_id')).toMatchObject({ routing: true, sensitive: false });
    expect(rules.keyFacts('enter_otp')).toMatchObject({ sensitive: true });
    expect(rules.keyFacts('ABCDE1234F')).toMatchObject({ mayHoldIdentity: true });
    expect(rules.keyFacts('user_id')).toMatchObject({ identifierField: true });
    expect(rules.keyFacts('sdkVersion')).toMatchObject({ identifierField: true });
    expect(rules.keyFacts('employeeCode')).toBe(rules.keyFacts('employeeCode'));
    // A client's long keys are not kept: each is worked out again, to the same answers.
    const long = `${'a'.repeat(70)}_otp`;
    expect(rules.keyFacts(long)).toEqual({
      routing: false,
      sensitive: true,
      mayHoldIdentity: false,
      identifierField: false,
    });
    expect(rules.keyFacts(long)).not.toBe(rules.keyFacts(long));
  });

  it('takes extra keys from the deployment', () => {
    const rules = createPiiRules(['employee_code', 'ckycNumber']);
    expect(rules.isSensitiveKey('employeeCode')).toBe(true);
    expect(rules.isSensitiveKey('ckyc-number')).toBe(true);
    expect(createPiiRules().isSensitiveKey('employee_code')).toBe(false);
  });

  it('masks a value under such a key whatever it looks like, dates whole, with its shape', () => {
    // Nothing recognised (a name, an address): masked whole, so no surname shows in a last four.
    expect(maskKeyed('Jane Doe')).toEqual({
      text: '**** ***',
      shape: { length: 8, digits: 0, letters: 7, kind: 'text' },
    });
    expect(maskKeyed('1995-06-15')).toEqual({
      text: '****-**-**',
      shape: { length: 10, digits: 8, letters: 0, kind: 'date' },
    });
    expect(maskKeyed('ABCDE1234F').shape.kind).toBe('pan');
  });
});

describe('hint rule', () => {
  const hint = (value: string, componentType: string, masked = false) =>
    redactHint({ hint: value, masked, componentType, pattern: '[A-Z]{5}[0-9]{4}[A-Z]' });

  it('keeps a choice hint only when it reads as a short label', () => {
    expect(hint('checked', 'checkbox')).toBeUndefined();
    expect(hint('proceed_with_aadhaar', 'DROPDOWN')).toBeUndefined();
    expect(hint('file_uploaded.png', 'file_upload')).toBeUndefined();
    expect(hint('ABCDE1234F', 'DROPDOWN')).toMatchObject({
      hint: '**********',
      masked: true,
      masked_by: 'server',
      shape: { kind: 'pan', matches_pattern: true },
    });
    expect(hint('jane@example.com', 'dropdown')?.hint).toBe('****@*******.***');
    // A component whose name says it holds an identity value keeps no choice as sent.
    expect(
      redactHint({ hint: 'savings', masked: false, componentType: 'dropdown', pattern: undefined, sensitive: true })
        ?.hint,
    ).toBe('*******');
    expect(hint('option 2', 'radio_button')?.hint).toBe('****** *');
    expect(hint('a label far longer than thirty-two characters', 'button')?.masked_by).toBe('server');
  });

  it('masks a date of birth whole: no day, no part of the month', () => {
    expect(hint('1995-06-15', 'date_picker')).toMatchObject({
      hint: '****-**-**',
      shape: { kind: 'date', length: 10 },
    });
    expect(hint('17 ஆகஸ்ட் 1993', 'date_picker')?.hint).not.toMatch(/17|1993|ஆக/);
  });

  it('keeps the shape the agent needs: a PAN field holding 10 characters that do not match the PAN pattern', () => {
    expect(hint('INVALIDPAN', 'text_input')).toEqual({
      hint: '**********',
      masked: true,
      masked_by: 'server',
      shape: { length: 10, digits: 0, letters: 10, matches_pattern: false },
    });
  });

  it('masks text nothing recognises whole: a last four there could be a surname or a PIN code', () => {
    expect(hint('Meera Nair', 'text_input')).toMatchObject({ hint: '***** ****', shape: { length: 10, letters: 9 } });
    expect(hint('Priya Das', 'text_input')?.hint).toBe('***** ***');
    expect(hint('12 MG Road Bengaluru 560001', 'text_input')?.hint).toBe('** ** **** ********* ******');
    // A mobile number keeps its last four, as the SDKs' own masks do; nothing else does.
    expect(hint('9876543210', 'phone_number')).toMatchObject({ hint: '******3210', shape: { kind: 'phone' } });
    expect(hint('J1234567', 'text_input')?.hint).toBe('********');
  });

  it('does not trust masked:true when the hint still holds an identity value', () => {
    expect(hint('ABCD****', 'pan', true)).toBeUndefined();
    expect(hint('j***@example.com', 'text_input', true)).toBeUndefined();
    expect(hint('ABCDE1234F', 'pan', true)).toMatchObject({
      hint: '**********',
      masked: true,
      masked_by: 'server',
      shape: { kind: 'pan' },
    });
  });
});
