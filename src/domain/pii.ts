/**
 * The one definition of "sensitive" for events, logs and inspection: value detectors for the
 * identifiers of Indian KYC, and key rules for fields that hold identity values whatever they
 * look like. Both are data; a deployment adds keys with PII_EXTRA_KEYS.
 */
import { jsonStringSize } from './json-size.js';

export type PiiKind =
  | 'email'
  | 'date'
  | 'aadhaar'
  | 'phone'
  | 'number'
  | 'pan'
  | 'voter_id'
  | 'passport'
  | 'ifsc'
  | 'otp'
  | 'text'
  | 'dropped';

export interface ValueShape {
  length: number;
  digits: number;
  letters: number;
  kind?: PiiKind;
}

/**
 * A boundary is where no ASCII letter or digit is next to the match. ASCII rather than any script
 * on purpose: a value glued to a Devanagari word is still found (fail closed), and ASCII classes
 * keep the scan cheap. Digits of other scripts are read as ASCII before the scan.
 */
const B = '(?<![A-Za-z0-9])';
const E = '(?![A-Za-z0-9])';
/** Digits after a `+` are the rest of an international number, not a value of their own. */
const BD = '(?<![A-Za-z0-9+])';
const MONTHS = 'jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|april|june|july|august|september|october|november|december';
const DAY = '(?:0?[1-9]|[12]\\d|3[01])';
const MONTH = '(?:0?[1-9]|1[0-2])';
const YEAR = '(?:19|20)\\d{2}';

export interface Detector {
  kind: PiiKind;
  /** Global; every quantifier bounded so a scan stays linear in the string. */
  pattern: RegExp;
  /** Cheap preconditions: fewer digits or characters than this and the detector cannot match. */
  minDigits: number;
  minLength: number;
  /** A match the detector turns down (a 12-digit number that fails the Aadhaar check digit). */
  accept?: (match: string) => boolean;
  /** Dates say too much in any part: masked whole, not with the last four kept. */
  maskWhole?: boolean;
}

const VERHOEFF_D = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  [1, 2, 3, 4, 0, 6, 7, 8, 9, 5],
  [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
  [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
  [4, 0, 1, 2, 3, 9, 5, 6, 7, 8],
  [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
  [6, 5, 9, 8, 7, 1, 0, 4, 3, 2],
  [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
  [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
  [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
];
const VERHOEFF_P = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  [1, 5, 7, 6, 2, 8, 3, 0, 9, 4],
  [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
  [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
  [9, 4, 5, 3, 1, 2, 6, 8, 7, 0],
  [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
  [2, 7, 9, 3, 8, 0, 6, 4, 1, 5],
  [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
];

/** The Verhoeff check digit scheme UIDAI uses: a valid number checks to 0 over all its digits. */
export function verhoeffValid(digits: string): boolean {
  let check = 0;
  for (let i = 0; i < digits.length; i += 1) {
    const digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (digit < 0 || digit > 9) return false;
    check = VERHOEFF_D[check]![VERHOEFF_P[i % 8]![digit]!]!;
  }
  return check === 0;
}

const digitsOf = (text: string) => text.replace(/\D/g, '');

/**
 * In order: each detector sees the text the ones before it left, and a masked value has too few
 * letters and digits left to match a later one.
 */
export const DETECTORS: readonly Detector[] = [
  { kind: 'email', minDigits: 0, minLength: 6, pattern: new RegExp(`[\\p{L}\\p{N}._%+-]{1,64}@[\\p{L}\\p{N}-]{1,63}(?:\\.[\\p{L}\\p{N}-]{1,63}){0,6}\\.\\p{L}{2,24}(?![\\p{L}\\p{N}])`, 'gu') },
  {
    kind: 'date',
    minDigits: 4,
    minLength: 8,
    maskWhole: true,
    pattern: new RegExp(
      // Numeric (year first, day first, month first), then with the month named: `15th June 1987`, `Jun. 15, 1995`.
      `${B}(?:${YEAR}[-/. ]${MONTH}[-/. ]${DAY}|${DAY}[-/. ]${MONTH}[-/. ]${YEAR}|${MONTH}[-/.]${DAY}[-/.]${YEAR}|${DAY}(?:st|nd|rd|th)?[ -]?(?:${MONTHS})\\.?[ ,-]{0,2}${YEAR}|(?:${MONTHS})\\.?[ -]?${DAY}(?:st|nd|rd|th)?,? ?${YEAR})${E}`,
      'gi',
    ),
  },
  { kind: 'aadhaar', minDigits: 12, minLength: 12, pattern: new RegExp(`${BD}[2-9]\\d{3}[ ._/-]?\\d{4}[ ._/-]?\\d{4}${E}`, 'g'), accept: (match) => verhoeffValid(digitsOf(match)) },
  /** A mobile number however grouped: `98765 43210`, `987-654-3210`, `9876 543 210`, `(987) 654-3210`, with or without +91. */
  {
    kind: 'phone',
    minDigits: 10,
    minLength: 10,
    pattern: new RegExp(`${BD}(?:\\+91[ ._/-]?|0091[ ._/-]?|0)?(?:\\([6-9]\\d{2}\\)[ ._/-]?\\d{3}[ ._/-]?\\d{4}|[6-9](?:[ ._/-]?\\d){9})${E}`, 'g'),
  },
  /** Bank account numbers, and any other run of digits long enough to be an identifier. */
  { kind: 'number', minDigits: 9, minLength: 9, pattern: new RegExp(`${BD}\\+?\\d{9,18}${E}`, 'g') },
  { kind: 'pan', minDigits: 4, minLength: 10, pattern: new RegExp(`${B}[A-Z]{5}[ ._-]?\\d{4}[ ._-]?[A-Z]${E}`, 'gi') },
  { kind: 'voter_id', minDigits: 7, minLength: 10, pattern: new RegExp(`${B}[A-Z]{3}\\d{7}${E}`, 'gi') },
  { kind: 'passport', minDigits: 7, minLength: 8, pattern: new RegExp(`${B}[A-Z]\\d{7}${E}`, 'gi') },
  { kind: 'ifsc', minDigits: 1, minLength: 11, pattern: new RegExp(`${B}[A-Z]{4}0[A-Z0-9]{6}${E}`, 'gi') },
];

/** In a field about an OTP (its key, component id or type says so), any short code is one. */
export const OTP_DETECTOR: Detector = { kind: 'otp', minDigits: 4, minLength: 4, pattern: new RegExp(`${B}\\d{4,8}${E}`, 'g') };

/**
 * Keys whose values are identity values whatever they look like, compared with case and
 * `_`/`-`/space ignored (`full_name`, `fullName`, `full-name`): an exact list, so
 * `display_name` or `component_id` stay readable.
 */
export const SENSITIVE_KEYS: readonly string[] = [
  'phone', 'mobile', 'phone_number', 'mobile_number', 'mobile_no', 'phone_no', 'msisdn', 'alternate_phone',
  'email', 'email_address', 'email_id',
  'pan', 'pan_number', 'pan_no',
  'aadhaar', 'aadhar', 'aadhaar_number', 'aadhar_number', 'aadhaar_no', 'uidai', 'vid',
  'dob', 'date_of_birth', 'birth_date', 'birthday',
  'otp', 'otp_code', 'pin', 'password', 'passcode',
  'account_number', 'account_no', 'bank_account', 'bank_account_number', 'ifsc', 'ifsc_code', 'upi_id', 'vpa',
  'full_name', 'first_name', 'middle_name', 'last_name', 'father_name', 'mother_name', 'spouse_name', 'legal_name',
  'address', 'address_line1', 'address_line2', 'street', 'permanent_address', 'current_address',
  'passport', 'passport_number', 'passport_no', 'voter_id', 'epic', 'epic_number', 'driving_licence', 'driving_license',
  'value', 'input_value', 'raw', 'raw_value', 'transcript', 'hint', 'text_value',
];

/** Keys whose value, at a body's top level, is an opaque routing id the service itself depends on: never rewritten there. */
export const ROUTING_KEYS: readonly string[] = ['session_id'];

export const normalizeKey = (key: string) => key.toLowerCase().replace(/[\s_-]/g, '');

/** Past these, a value is not scanned: it is dropped with a marker (fail closed). */
export const MAX_SCAN_CHARS = 4096;
export const MAX_SCAN_DEPTH = 8;
/** Shapes listed next to an event; more redactions than this are counted, not described. */
export const MAX_SHAPES = 32;

export interface PiiRules {
  isSensitiveKey(key: string): boolean;
  isRoutingKey(key: string): boolean;
  /** All the redaction pass asks of a key, worked out once per distinct key. */
  keyFacts(key: string): KeyFacts;
}

/** What a key is to the redaction pass. Pure functions of the key, so remembered per key. */
export interface KeyFacts {
  routing: boolean;
  sensitive: boolean;
  /** Names an OTP field: its values are read as OTPs. */
  otp: boolean;
  /** The key itself could hold an identity value, so it is scanned like any text. */
  mayHoldIdentity: boolean;
  /** The key's share of an object's JSON: quoted, escaped, and its colon. */
  jsonBytes: number;
}

const OTP_WORD = /(?:^|[^a-z])otp(?:[^a-z]|$)/;
/** A field or component named for an OTP ("otp", "otp_input", "enterOtp"), not merely containing the letters. */
export const isOtpName = (name: string | null | undefined) => typeof name === 'string' && name.length >= 3 && /otp/i.test(name) && OTP_WORD.test(name.toLowerCase());

/** Extra keys must read as keys: a typo such as a stray comma should not silently match nothing. */
export const EXTRA_KEY_PATTERN = /^[A-Za-z][A-Za-z0-9 _-]{0,63}$/;

/** Distinct keys remembered per rule set: clients repeat the same few, and the bound keeps memory flat. */
const KEY_CACHE_SIZE = 4096;
const MAX_REMEMBERED_KEY = 64;

export function createPiiRules(extraKeys: readonly string[] = []): PiiRules {
  const sensitive = new Set([...SENSITIVE_KEYS, ...extraKeys].map(normalizeKey));
  const routing = new Set(ROUTING_KEYS);
  // Normalising a key costs more than the rest of its check: each key is looked at once.
  const seen = new Map<string, KeyFacts>();
  const factsOf = (key: string): KeyFacts => {
    // A routing key is never also sensitive: it is passed through as sent.
    const isRouting = routing.has(key);
    return { routing: isRouting, sensitive: !isRouting && sensitive.has(normalizeKey(key)), otp: isOtpName(key), mayHoldIdentity: mayHoldIdentity(key), jsonBytes: jsonStringSize(key) + 1 };
  };
  const keyFacts = (key: string): KeyFacts => {
    // A key longer than any field name is worked out each time: remembered, 4,096 of them could hold a client's 64 KiB bodies.
    if (key.length > MAX_REMEMBERED_KEY) return factsOf(key);
    let facts = seen.get(key);
    if (facts === undefined) {
      facts = factsOf(key);
      if (seen.size >= KEY_CACHE_SIZE) seen.clear();
      seen.set(key, facts);
    }
    return facts;
  };
  return {
    isSensitiveKey: (key) => keyFacts(key).sensitive,
    isRoutingKey: (key) => keyFacts(key).routing,
    keyFacts,
  };
}

export const DEFAULT_PII_RULES = createPiiRules();

const LETTER = /\p{L}/u;
const DIGIT = /\p{Nd}/u;

export function shapeOf(value: string, kind?: PiiKind): ValueShape {
  let digits = 0;
  let letters = 0;
  let length = 0;
  for (const char of value) {
    length += 1;
    const code = char.charCodeAt(0);
    // ASCII answered by code, the rest by Unicode class.
    if (code < 128) {
      if (code >= 48 && code <= 57) digits += 1;
      else if ((code | 32) >= 97 && (code | 32) <= 122) letters += 1;
    } else if (DIGIT.test(char)) digits += 1;
    else if (LETTER.test(char)) letters += 1;
  }
  return kind === undefined ? { length, digits, letters } : { length, digits, letters, kind };
}

/** Every letter and digit starred, separators kept: what a date or an OTP is masked to. */
export const maskWhole = (value: string) => value.replace(/[\p{L}\p{N}]/gu, '*');

export interface Finding {
  kind: PiiKind;
  shape: ValueShape;
}

export interface ScrubResult {
  text: string;
  findings: Finding[];
  /** The whole string (trimmed) was one detected value. */
  whole: PiiKind | undefined;
}

const MIN_LENGTH = Math.min(...DETECTORS.map((detector) => detector.minLength));
const WITH_OTP = [...DETECTORS, OTP_DETECTOR];
const clean = (text: string): ScrubResult => ({ text, findings: [], whole: undefined });

function countDigits(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code >= 48 && code <= 57) count += 1;
  }
  return count;
}

/** Zero of each decimal digit block an Indian user may type in; NFKC folds fullwidth and the rest. */
const DIGIT_ZEROS = [0x660, 0x6f0, 0x966, 0x9e6, 0xa66, 0xae6, 0xb66, 0xbe6, 0xc66, 0xce6, 0xd66, 0xde6, 0xe50, 0xed0, 0xf20, 0x1040];
const NON_ASCII = /[^\x00-\x7f]/;

/** Format characters (zero-width space, soft hyphen, bidi marks), control characters, a whitespace run. */
const HIDING = /[\p{Cf}\p{Cc}]|\s\s/u;

/**
 * What a reader sees: invisible format characters dropped, control characters and runs of
 * whitespace read as one space. A value split by them (`ABCDE\u200b1234F`, `98765\n43210`) is
 * still the value, and the system prompt's flattening would put it back together.
 */
function plainSpacing(text: string): string {
  if (!HIDING.test(text)) return text;
  return text.replace(/\p{Cf}/gu, '').replace(/[\s\p{Cc}]+/gu, ' ');
}

/** Non-ASCII digits read as ASCII ones, so `९८७६…` or `９８７６…` is no way around a detector. */
function asciiDigits(text: string): string {
  if (!NON_ASCII.test(text)) return text;
  return text.normalize('NFKC').replace(/\p{Nd}/gu, (digit) => {
    const code = digit.codePointAt(0)!;
    const zero = DIGIT_ZEROS.find((start) => code >= start && code < start + 10);
    return zero === undefined ? digit : String(code - zero);
  });
}

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
const KEEP_TAIL = 4;
const SHORT_VALUE = 8;

/**
 * Values of 8+ characters keep their last 4 characters and their separators; shorter
 * values are masked whole, because 4 of 6 characters would give most of an OTP away.
 */
export function maskValue(value: string): string {
  if (NON_ASCII.test(value)) {
    const chars = Array.from(value);
    if (chars.length < SHORT_VALUE) return '*'.repeat(chars.length);
    const tailStart = chars.length - KEEP_TAIL;
    return chars.map((char, index) => (index >= tailStart || !LETTER_OR_DIGIT.test(char) ? char : '*')).join('');
  }
  if (value.length < SHORT_VALUE) return '*'.repeat(value.length);
  // ASCII, the usual case: letters and digits by code, no regex per character.
  const tailStart = value.length - KEEP_TAIL;
  let masked = '';
  for (let i = 0; i < tailStart; i += 1) {
    const code = value.charCodeAt(i);
    const lower = code | 32;
    masked += (code >= 48 && code <= 57) || (lower >= 97 && lower <= 122) ? '*' : value[i];
  }
  return masked + value.slice(tailStart);
}

/**
 * Whether `text` could hold an identity value at all: long enough, with a digit or an `@`, or
 * non-ASCII (other scripts' digits). One pass over the characters, no allocation: most strings
 * of an event are short ids and stop here.
 */
export function mayHoldIdentity(text: string, otpContext = false): boolean {
  const length = text.length;
  if (length > MAX_SCAN_CHARS) return true;
  if (length < (otpContext ? OTP_DETECTOR.minLength : MIN_LENGTH)) return false;
  for (let i = 0; i < length; i += 1) {
    const code = text.charCodeAt(i);
    if ((code >= 48 && code <= 57) || code === 64 || code > 127) return true;
  }
  return false;
}

/**
 * Masks every detected identity value inside `text` (the rest stays readable) and says what it
 * found. Strings over the budget are not scanned but dropped with a marker.
 */
export function scrubText(input: string, otpContext = false): ScrubResult {
  if (input.length > MAX_SCAN_CHARS) {
    return { text: `[dropped: ${input.length} chars]`, findings: [{ kind: 'dropped', shape: { length: input.length, digits: 0, letters: 0, kind: 'dropped' } }], whole: 'dropped' };
  }
  if (!mayHoldIdentity(input, otpContext)) return clean(input);
  let text = plainSpacing(asciiDigits(input));
  const digits = countDigits(text);
  const hasAt = text.includes('@');
  if (digits === 0 && !hasAt) return clean(input);
  const findings: Finding[] = [];
  let whole: PiiKind | undefined;
  let trimmed: string | undefined;
  const detectors = otpContext ? WITH_OTP : DETECTORS;
  for (const detector of detectors) {
    if (digits < detector.minDigits || text.length < detector.minLength || (detector.kind === 'email' && !hasAt)) continue;
    // A test is far cheaper than a replace with a callback, and most strings match nothing.
    detector.pattern.lastIndex = 0;
    if (!detector.pattern.test(text)) continue;
    detector.pattern.lastIndex = 0;
    trimmed ??= text.trim();
    text = text.replace(detector.pattern, (match: string) => {
      if (detector.accept && !detector.accept(match)) return match;
      findings.push({ kind: detector.kind, shape: shapeOf(match, detector.kind) });
      if (match === trimmed) whole = detector.kind;
      return detector.maskWhole ? maskWhole(match) : maskValue(match);
    });
  }
  return findings.length === 0 ? clean(input) : { text, findings, whole };
}

/** The first detector that matches the whole of `value`, if any. */
export function detectWhole(value: string): PiiKind | undefined {
  return scrubText(value).whole;
}

/**
 * A value under a sensitive key: masked whatever it looks like, with its shape. A recognised
 * identifier keeps its last four like a hint; dates, codes and text nothing recognises (a name,
 * an address) are masked whole, since a last four there would be a surname or a PIN code.
 */
export function maskKeyed(value: string): { text: string; shape: ValueShape } {
  if (value.length > MAX_SCAN_CHARS) return { text: `[dropped: ${value.length} chars]`, shape: { length: value.length, digits: 0, letters: 0, kind: 'dropped' } };
  const kind = detectWhole(value) ?? 'text';
  const text = kind === 'date' || kind === 'otp' || kind === 'text' ? maskWhole(value) : maskValue(value);
  return { text, shape: shapeOf(value, kind) };
}
