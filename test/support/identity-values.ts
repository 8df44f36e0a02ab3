import fc from 'fast-check';
import { verhoeffValid } from '../../src/domain/pii.js';

/**
 * Generators of the identity values the redaction pass must catch, in the formats people and
 * SDKs write them, and of the ids that must stay readable. Shared by the property tests.
 */

const digit = fc.constantFrom(...'0123456789');
const upper = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZ');
const digits = (min: number, max = min) => fc.array(digit, { minLength: min, maxLength: max }).map((chars) => chars.join(''));
const uppers = (n: number) => fc.array(upper, { minLength: n, maxLength: n }).map((chars) => chars.join(''));

/** The one check digit that makes `prefix` a valid Verhoeff number. */
export function withVerhoeff(prefix: string): string {
  for (let check = 0; check <= 9; check += 1) if (verhoeffValid(`${prefix}${check}`)) return `${prefix}${check}`;
  throw new Error('no Verhoeff check digit');
}

export interface IdentityValue {
  kind: string;
  /** As the client sends it. */
  raw: string;
}

const pan = fc
  .tuple(uppers(5), digits(4), upper, fc.boolean(), fc.constantFrom('', ' ', '-', '.', '_'))
  .map(([a, b, c, lower, sep]) => (lower ? `${a}${sep}${b}${sep}${c}`.toLowerCase() : `${a}${sep}${b}${sep}${c}`));

const aadhaar = fc.tuple(fc.constantFrom(...'23456789'), digits(10), fc.constantFrom('', ' ', '-', '.', '/')).map(([first, rest, sep]) => {
  const number = withVerhoeff(`${first}${rest}`);
  return sep === '' ? number : `${number.slice(0, 4)}${sep}${number.slice(4, 8)}${sep}${number.slice(8)}`;
});

/** A 10-digit mobile number as people write it: whole, 5-5, 3-3-4 (with ` `, `-` or `.`), 4-3-3, `(987) 654-3210`. */
const phone = fc
  .tuple(fc.constantFrom('', '+91', '+91 ', '+91-', '0'), fc.constantFrom(...'6789'), digits(9), fc.integer({ min: 0, max: 7 }))
  .map(([prefix, first, rest, format]) => {
    const n = `${first}${rest}`;
    const grouped = [
      n,
      `${n.slice(0, 5)} ${n.slice(5)}`,
      `${n.slice(0, 3)}-${n.slice(3, 6)}-${n.slice(6)}`,
      `${n.slice(0, 3)} ${n.slice(3, 6)} ${n.slice(6)}`,
      `${n.slice(0, 3)}.${n.slice(3, 6)}.${n.slice(6)}`,
      `${n.slice(0, 4)} ${n.slice(4, 7)} ${n.slice(7)}`,
      `(${n.slice(0, 3)}) ${n.slice(3, 6)}-${n.slice(6)}`,
      `${n.slice(0, 5)}_${n.slice(5)}`,
    ][format]!;
    return `${prefix}${grouped}`;
  });

const emailPart = fc.stringMatching(/^[a-z0-9]{1,12}$/);
const email = fc
  .tuple(emailPart, fc.option(emailPart, { nil: undefined }), emailPart, fc.constantFrom('com', 'in', 'co.in', 'org', 'example'))
  .map(([local, more, domain, tld]) => `${local}${more ? `.${more}` : ''}@${domain}.${tld}`);

const MONTH_NAMES = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const date = fc
  .tuple(fc.integer({ min: 1940, max: 2012 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 28 }), fc.integer({ min: 0, max: 8 }))
  .map(([year, month, day, format]) => {
    const dd = String(day).padStart(2, '0');
    const mm = String(month).padStart(2, '0');
    return [
      `${year}-${mm}-${dd}`,
      `${dd}/${mm}/${year}`,
      `${dd}-${mm}-${year}`,
      `${day} ${MONTH_NAMES[month - 1]} ${year}`,
      `${dd}.${mm}.${year}`,
      `${dd} ${mm} ${year}`,
      `${day}th ${MONTH_NAMES[month - 1]} ${year}`,
      `${MONTH_NAMES[month - 1]}. ${day}, ${year}`,
      `${mm}/${dd}/${year}`,
    ][format]!;
  });

const account = fc.tuple(fc.constantFrom(...'123456789'), digits(8, 17)).map(([first, rest]) => `${first}${rest}`);
const ifsc = fc.tuple(uppers(4), fc.constantFrom(...'ABCDEFGHJKLMNPQRSTUVWXYZ0123456789'), digits(5)).map(([bank, a, branch]) => `${bank}0${a}${branch}`);
const passport = fc.tuple(upper, digits(7)).map(([letter, number]) => `${letter}${number}`);
const voterId = fc.tuple(uppers(3), digits(7)).map(([letters, number]) => `${letters}${number}`);

export const identityValue: fc.Arbitrary<IdentityValue> = fc.oneof(
  pan.map((raw) => ({ kind: 'pan', raw })),
  aadhaar.map((raw) => ({ kind: 'aadhaar', raw })),
  phone.map((raw) => ({ kind: 'phone', raw })),
  email.map((raw) => ({ kind: 'email', raw })),
  date.map((raw) => ({ kind: 'date', raw })),
  account.map((raw) => ({ kind: 'number', raw })),
  ifsc.map((raw) => ({ kind: 'ifsc', raw })),
  passport.map((raw) => ({ kind: 'passport', raw })),
  voterId.map((raw) => ({ kind: 'voter_id', raw })),
);

/**
 * A one-time code: caught only where a field is about an OTP. Six digits: shorter runs of digits
 * are everywhere in what the service writes (ids, counts, UUID segments), so a search for one
 * would find those; 4-digit codes are covered by example tests.
 */
export const otpValue = digits(6).map((raw) => ({ kind: 'otp', raw }));

/** Ids the deployed SDKs send (docs/decisions/0017-what-the-deployed-sdks-do.md) and their like: they must come back exactly as sent. */
export const NEAR_MISSES = [
  'pan_details', 'phone_otp', 'digilocker_aadhaar', 'upload_aadhaar_front', 'PAN_DETAILS', 'DIGILOCKER_AADHAAR',
  'pan_field', 'phone_otp_field', 'aadhaar_digilocker_field', 'email_otp', 'pan_number', 'aadhaar_number', 'father_name',
  'pan_format_v1', 'phone_otp_verify_v1', 'aadhaar_length_v1', 'harness_validation_v1', 'otp_email_v1', 'retry_pan_01', 'retake_selfie_01',
  'pan_invalid_format', 'phone_otp_expired', 'aadhaar_incomplete', 'invalid_pan_format', 'incomplete_otp', 'invalid_length_or_format', 'phone_invalid_format',
  'kyc_onboarding', 'PAN_ENTRY', 'AADHAAR_VERIFICATION', 'PAN_FORMAT', 'OTP_VERIFY', 'new_pan_entry', 'n_otp_verify',
  'kyc_step_started', 'voice_session_ended', 'popup_reason_code', 'screen_21', 'v2', '2.4.1', 'kycis_demo', 'file_uploaded.png',
];
export const nearMiss = fc.constantFrom(...NEAR_MISSES);

/** Where in a string the value sits: alone, or inside words a person or an app would write. */
export const embed = (raw: string) =>
  fc.constantFrom(raw, `my number is ${raw}`, `${raw}.`, `value=${raw}; retry`, `(${raw})`, `Sent: "${raw}" by user`);

/** Field names that are not identity-named: only the detectors can catch what they hold. */
export const plainKey = fc.constantFrom('note', 'data', 'extra', 'info', 'label', 'message', 'detail', 'payload', 'meta', 'misc', 'x', 'comment', 'display_name');
/** Identity-named fields, in the spellings clients use. */
export const sensitiveKey = fc.constantFrom('phone', 'mobileNumber', 'email', 'EMAIL', 'pan', 'panNumber', 'aadhaar', 'aadhaar-number', 'dob', 'otp', 'account_number', 'full_name', 'fatherName', 'address', 'value', 'input_value', 'raw', 'transcript');

export const EVENT_TYPES = [
  'component_input', 'validation_failed', 'screen_state', 'analytics_data', 'identity', 'user_enrichment', 'voice_conversation_turn',
  'error_reported', 'screen_schema', 'screen_schema_lazy', 'validation_error', 'telephony_call_state', 'workflow_model', 'custom_future_event',
];

/** Puts `value` at `path` (keys, numbers for array slots) of a fresh object. */
export function nest(path: (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  if (typeof head === 'number') {
    const array: unknown[] = Array.from({ length: head }, (_, i) => `item_${i}`);
    array.push(nest(rest, value));
    return array;
  }
  return { [head!]: nest(rest, value) };
}

/** A path of 0-4 steps below a field: object keys and array slots. */
export const innerPath = fc.array(fc.oneof(plainKey, fc.integer({ min: 0, max: 2 })), { maxLength: 4 });

/** Escapes a value for use in a RegExp. */
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Where `raw` appears in `text` as the value itself: not inside a longer run of letters and
 * digits (a hex trace id, a timestamp), nor as the tail a mask keeps (`******3210`).
 */
export function findRaw(text: string, raw: string): boolean {
  return new RegExp(`(?<![\\p{L}\\p{N}*])${escaped(raw)}(?![\\p{L}\\p{N}])`, 'iu').test(text);
}
