import { describe, expect, it } from 'vitest';
import { redactEvent } from '../../src/domain/event-redaction.js';
import { scrubText } from '../../src/privacy/scrub.js';
import { redactHint } from '../../src/privacy/hints.js';
import { EventInSchema } from '../../src/domain/sdk-event.js';
import { withVerhoeff } from '../support/identity-values.js';

/**
 * The forms Indian users type and speak identity values in, each as found leaking: every one must
 * be caught inside ordinary text, and what the service itself writes must come through untouched.
 */

/** Digits of `ascii` in the decimal digit block that starts at `zero`. */
const inScript = (ascii: string, zero: number) =>
  ascii.replace(/\d/g, (digit) => String.fromCodePoint(zero + Number(digit)));

const AADHAAR = withVerhoeff('23456789012');
const VID = withVerhoeff('910037123456789');

/** [label, text as sent, a part of it that must not survive] */
const LEAKS: [string, string, string][] = [
  [
    'phone spoken in English',
    'my number is nine eight seven six five four three two one zero thanks',
    'nine eight seven six five four three two one zero',
  ],
  ['phone spoken in Hindi', 'मेरा नंबर है नौ आठ सात छह पांच चार तीन दो एक शून्य', 'नौ आठ सात छह पांच चार तीन दो एक शून्य'],
  [
    'phone in Hinglish words',
    'number hai nau aath saat chhe paanch chaar teen do ek shunya',
    'nau aath saat chhe paanch chaar teen do ek shunya',
  ],
  [
    'phone in words with double',
    'it is nine eight double seven six five four three two one',
    'nine eight double seven six five four three two one',
  ],
  ['phone in mixed digits and words', 'call 98765 four three two one zero today', 'four three two one zero'],
  [
    'phone with tens words',
    'ninety eight seventy six fifty four thirty two ten',
    'ninety eight seventy six fifty four thirty two ten',
  ],
  ['e-mail spoken with at and dot', 'write to meera dot nair at gmail dot com please', 'meera dot nair at gmail'],
  ['e-mail with [at] and [dot]', 'mail: meera.nair[at]gmail[dot]com', 'meera.nair[at]gmail'],
  ['e-mail with (at) and (dot)', 'meera (at) gmail (dot) com', 'meera (at) gmail'],
  ['e-mail with [at] and [dot], alone', 'meera.nair[at]gmail[dot]com', 'meera.nair'],
  ['e-mail with (at), no space anywhere', 'meera(at)gmail(dot)com', 'meera'],
  ['PAN spelled out with spaces', 'my PAN is A B C D E 1 2 3 4 F', 'A B C D E 1 2 3'],
  ['PAN spelled out with dashes', 'pan a-b-c-d-e-1-2-3-4-f', 'a-b-c-d-e'],
  ['PAN spelled out, digits in words', 'P A N: a b c d e one two three four f', 'a b c d e one two three'],
  ['e-mail with at the rate', 'my mail is meera at the rate gmail dot com', 'meera at the rate gmail'],
  ['e-mail with a Devanagari local part', 'ईमेल मीरा@gmail.com है', 'मीरा@gmail'],
  [
    'VID grouped 4-4-4-4',
    `VID ${VID.slice(0, 4)} ${VID.slice(4, 8)} ${VID.slice(8, 12)} ${VID.slice(12)}`,
    VID.slice(4, 12),
  ],
  [
    'Aadhaar with en dashes',
    `${AADHAAR.slice(0, 4)}\u2013${AADHAAR.slice(4, 8)}\u2013${AADHAAR.slice(8)}`,
    AADHAAR.slice(4, 8),
  ],
  [
    'Aadhaar with em dashes',
    `${AADHAAR.slice(0, 4)}\u2014${AADHAAR.slice(4, 8)}\u2014${AADHAAR.slice(8)}`,
    AADHAAR.slice(4, 8),
  ],
  [
    'Aadhaar with minus signs',
    `${AADHAAR.slice(0, 4)}\u2212${AADHAAR.slice(4, 8)}\u2212${AADHAAR.slice(8)}`,
    AADHAAR.slice(4, 8),
  ],
  [
    'Aadhaar grouped 3-3-3-3',
    `aadhaar ${AADHAAR.slice(0, 3)} ${AADHAAR.slice(3, 6)} ${AADHAAR.slice(6, 9)} ${AADHAAR.slice(9)}`,
    `${AADHAAR.slice(3, 6)} ${AADHAAR.slice(6, 9)}`,
  ],
  [
    'Aadhaar with no-break spaces',
    `${AADHAAR.slice(0, 4)}\u00a0${AADHAAR.slice(4, 8)}\u00a0${AADHAAR.slice(8)}`,
    AADHAAR.slice(4, 8),
  ],
  ['card number spaced', 'card 4111 1111 1111 1111 exp', '4111 1111 1111'],
  ['account number spaced', 'a/c 5010 0123 4567 89 at SBI', '5010 0123 4567'],
  ['phone with an em dash', 'call 98765\u201443210', '98765'],
  ['phone with thin spaces', 'call 98765\u200943210', '98765'],
  ['phone in Ol Chiki digits', `phone ${inScript('9876543210', 0x1c50)}`, inScript('98765', 0x1c50)],
  ['phone in Meetei Mayek digits', `phone ${inScript('9876543210', 0xabf0)}`, inScript('98765', 0xabf0)],
  ['phone in Adlam digits', `phone ${inScript('9876543210', 0x1e950)}`, inScript('98765', 0x1e950)],
  ['phone in Gurmukhi digits', `phone ${inScript('9876543210', 0xa66)}`, inScript('98765', 0xa66)],
  ['GSTIN', 'GSTIN 27ABCDE1234F1Z5', 'ABCDE1234F'],
  ['driving licence with dashes', 'DL no MH-12-2011-0012345', 'MH-12-2011-001'],
  ['driving licence run together', 'licence MH1220110012345', 'MH1220110'],
  ['UPI id', 'pay to meera.nair@okaxis now', 'meera.nair@'],
  ['UPI id on a phone number', 'upi 9876543210@ybl', '98765'],
  ['date with a month named between slashes', 'dob 15/Jun/1995', '15/Jun/1995'],
  ['date run together', 'dob 15061995', '15061995'],
  ['date with a two-digit year', 'dob 15-06-95', '15-06-95'],
  ['date spaced around slashes', 'dob 15 / 06 / 1995', '15 / 06 / 1995'],
  ['date spoken', 'born on fifteenth june nineteen ninety five', 'nineteen ninety five'],
  ['date with a Hindi month', 'जन्म 15 जून 1995', '15 जून 1995'],
  ['vehicle number spaced', 'vehicle MH 12 AB 1234', 'MH 12 AB'],
  ['vehicle number run together', 'vehicle MH12AB1234', 'MH12AB'],
  ['address with a PIN code', 'I live at Flat 12, Shanti Apartments, Andheri West, Mumbai 400053', 'Shanti Apartments'],
  ['PIN code spoken', 'pin code four zero zero zero five three', 'four zero zero zero five three'],
  ['a name told', 'hello, my name is Meera Nair and I need help', 'Meera Nair'],
  ['a name told in Hindi', 'मेरा नाम मीरा नायर है', 'मीरा नायर'],
];

describe('identity values in the forms Indian users type and say them', () => {
  it.each(LEAKS)('%s is masked inside text', (_label, text, secret) => {
    const scan = scrubText(text);
    expect(scan.findings.length, JSON.stringify(scan)).toBeGreaterThan(0);
    expect(scan.text).not.toContain(secret);
  });

  it.each(LEAKS)('%s is masked in a spoken turn, a free field and a masked hint', (_label, text, secret) => {
    const event = redactEvent(
      EventInSchema.parse({
        session_id: 's1',
        event: 'voice_conversation_turn',
        properties: { role: 'user', text },
        note: text,
        hint: text,
        masked: true,
        component_type: 'text_input',
      }),
    );
    expect(JSON.stringify(event)).not.toContain(secret);
    expect(event.masked_by).toBe('server');
  });
});

describe('a hint sent as masked is verified', () => {
  it.each([
    [`${VID.slice(0, 4)} ${VID.slice(4, 8)} ${VID.slice(8, 12)} ${VID.slice(12)}`],
    ['4111 1111 1111 1111'],
    ['Meera Nair'],
    ['98765'],
    ['12 34 56 78'],
    ['ABCDE****'],
    ['Meera N***'],
    ['AB*DE12*4F'],
    ['meera.nair***@gmail.com'],
  ])('%s with masked: true is masked again by the server', (hint) => {
    const out = redactHint({ hint, masked: true, componentType: 'text_input', pattern: undefined });
    expect(out?.masked_by).toBe('server');
    expect(out?.hint).not.toBe(hint);
  });

  it.each([
    ['******3210'],
    ['j***@domain.com'],
    ['mee***@gmail.com'],
    ['ABCD****'],
    ['XXXX XXXX 9012'],
    ['•••• 4321'],
    ['M***a N**r'],
    ['Mee***'],
    ['V*****a R****a R*o'],
    ['redacted'],
    ['file_uploaded'],
  ])('%s with masked: true is kept as the client masked it', (hint) => {
    expect(redactHint({ hint, masked: true, componentType: 'text_input', pattern: undefined })).toBeUndefined();
  });
});

describe('names', () => {
  it.each([
    ['name'],
    ['customer_name'],
    ['customerName'],
    ['applicant_name'],
    ['nominee-name'],
    ['account_holder_name'],
    ['surname'],
  ])('a value under %s is masked', (key) => {
    const event = redactEvent(
      EventInSchema.parse({ session_id: 's1', event: 'identity', properties: { [key]: 'Meera Nair' } }),
    );
    expect(JSON.stringify(event)).not.toContain('Meera');
  });

  it.each([['event_name'], ['screen_name'], ['file_name'], ['display_name'], ['bank_name']])(
    'a value under %s, not a person, stays readable',
    (key) => {
      const event = redactEvent(
        EventInSchema.parse({ session_id: 's1', event: 'analytics_data', properties: { [key]: 'kyc_step_started' } }),
      );
      expect((event.properties as Record<string, unknown>)[key]).toBe('kyc_step_started');
    },
  );

  it.each([['dropdown'], ['radio_button'], ['RADIO_BUTTON']])(
    'a name chosen in a %s is masked; a machine value or a generic label is kept',
    (componentType) => {
      expect(redactHint({ hint: 'Meera Nair', masked: false, componentType, pattern: undefined })).toMatchObject({
        masked_by: 'server',
        hint: '***** ****',
      });
      expect(redactHint({ hint: 'MEERA NAIR', masked: false, componentType, pattern: undefined })?.masked_by).toBe(
        'server',
      );
      for (const kept of [
        'male',
        'single',
        'resident',
        'proceed_with_aadhaar',
        'Yes',
        'checked',
        'file_uploaded.png',
      ]) {
        expect(redactHint({ hint: kept, masked: false, componentType, pattern: undefined }), kept).toBeUndefined();
      }
    },
  );
});

describe('what the service writes itself stays readable', () => {
  it.each([
    ['a request id whose last group is all digits', '5f2c1a3b-9e4d-4a7b-8c1d-551234568277'],
    ['a request id in a sentence', 'request 0b6f2d6e-1234-4567-8901-234567890123 failed'],
    ['a trace id', '4bf92f3577b34da6a3ce929d0e0e4736'],
    ['a screen id and a version', 'pan_details v2.4.1'],
    ['a step count', 'Step 2 of 5: enter your PAN'],
    ['KYC screen text', 'Enter your 10-digit mobile number. We will send a one time password to verify it.'],
    [
      'KYC screen text on Aadhaar',
      'Aadhaar is a 12 digit number. Enter the digits as printed on your card, for example in groups of four.',
    ],
    ['ordinary talk with number words', 'I have two kids and one of them is at school'],
  ])('%s: %s', (_label, text) => {
    expect(scrubText(text)).toMatchObject({ text, findings: [] });
  });
});

describe('fail closed: four digits or more in client text are masked whatever they are (docs/explanation/privacy.md, "Limits we know of")', () => {
  it.each([
    ['an ISO time', '2026-11-26T23:39:37.123Z'],
    ['an address of a host', 'from 203.0.113.195 port 8080'],
    ['an amount', 'due: 1,50,000 in 5 days'],
  ])('%s: %s', (_label, text) => {
    const masked = scrubText(text).text;
    expect(masked).not.toMatch(/\d{2}/);
    expect(masked).toHaveLength(text.length);
  });
});
