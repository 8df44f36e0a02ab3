/**
 * The one definition of "sensitive" for events, logs and inspection: value detectors for the
 * identifiers of Indian KYC, and key rules for fields that hold identity values whatever they
 * look like. Both are data; a deployment adds keys with PII_EXTRA_KEYS.
 */
import { jsonStringSize } from './json-size.js';
import { readerView } from './plain-text.js';
import { readingOf, writeBack } from './reading.js';

export type PiiKind =
  | 'email'
  | 'upi'
  | 'date'
  | 'aadhaar'
  | 'vid'
  | 'card'
  | 'phone'
  | 'number'
  | 'gstin'
  | 'pan'
  | 'driving_licence'
  | 'vehicle'
  | 'voter_id'
  | 'passport'
  | 'ifsc'
  | 'address'
  | 'name'
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
 * keep the scan cheap. Digits of other scripts, dashes and spaces are read as ASCII before the
 * scan (plain-text.ts).
 */
const B = '(?<![A-Za-z0-9])';
const E = '(?![A-Za-z0-9])';
/** Boundaries in text of any script, for the detectors that read words. */
const WB = '(?<![\\p{L}\\p{M}\\p{N}])';
const WE = '(?![\\p{L}\\p{M}\\p{N}])';
/** Between two groups of a value: a space, or a dash, dot, slash or underscore with a space either side or none. */
const GROUP = '(?: ?[-._/] ?| )';
/** Between the characters of a value spelled out: a space, or a dash or dot with a space either side or none. */
const SPELLED = '(?: ?[-.] ?| )';
const MONTHS =
  'jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|april|june|july|august|september|october|november|december|' +
  'जनवरी|फ़रवरी|फरवरी|मार्च|अप्रैल|मई|जून|जुलाई|अगस्त|सितंबर|सितम्बर|अक्टूबर|अक्तूबर|नवंबर|नवम्बर|दिसंबर|दिसम्बर';
const DAY = '(?:0?[1-9]|[12]\\d|3[01])';
const MONTH = '(?:0?[1-9]|1[0-2])';
const DAY2 = '(?:0[1-9]|[12]\\d|3[01])';
const MONTH2 = '(?:0[1-9]|1[0-2])';
const YEAR = '(?:19|20)\\d{2}';
/** Between the parts of a date: `-`, `/`, `.` or `,`, a space either side or none, or a space. */
const DATE_SEP = '(?: ?[-/.,] ?| )';
/** Between a day, a month's name and a year: up to three of space, comma, dot, slash, dash. */
const NAMED_SEP = '[ ,./-]{0,3}';
/** The two-letter codes of India's states and union territories, which begin licences and vehicle numbers. */
const STATES = 'AN|AP|AR|AS|BR|CG|CH|DD|DL|DN|GA|GJ|HP|HR|JH|JK|KA|KL|LA|LD|MH|ML|MN|MP|MZ|NL|OD|OR|PB|PY|RJ|SK|TN|TR|TS|UK|UP|WB|UA';

export interface Detector {
  kind: PiiKind;
  /** Global; every quantifier bounded so a scan stays linear in the string. */
  pattern: RegExp;
  /** Cheap preconditions: fewer digits or characters than this and the detector cannot match. */
  minDigits: number;
  minLength: number;
  /** Another cheap precondition: a word the value cannot be written without. */
  cue?: RegExp;
  /** What a match is, or undefined for a match the detector turns down (a 12-digit number that fails the Aadhaar check digit). */
  classify?: (match: string) => PiiKind | undefined;
  /** Dates, names and addresses say too much in any part: masked whole, not with the last four kept. */
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

/** The Luhn check of payment card numbers. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i += 1) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return sum % 10 === 0;
}

const digitsOf = (text: string) => text.replace(/\D/g, '');

/** Four groups of one to three digits, each at most 255, split by dots: an IPv4 address, not an identity value. */
const isIpv4 = (match: string) => /^\d{1,3}(?:\.\d{1,3}){3}$/.test(match) && match.split('.').every((part) => Number(part) <= 255);

/**
 * Digits split by dots, slashes or underscores into groups shorter than three: array indices in a
 * path (`a.0.1.2`), a version, a fraction. People group identifiers in threes and fours.
 */
const isDottedPath = (match: string) => /^\d+(?:[._/]\d+)+$/.test(match) && match.split(/[._/]/).some((group) => group.length < 3);

/**
 * A run of digits however grouped (`9100 3712 3456 7890`, `234 567 890 124`, `98765-43210`,
 * `+91 98765 43210`), judged by its digits as a whole: a run is one value, so no part of it is
 * left readable because another part was taken for something else.
 */
export function classifyDigits(match: string): PiiKind | undefined {
  if (isIpv4(match) || isDottedPath(match)) return undefined;
  const digits = digitsOf(match);
  const n = digits.length;
  if (n < 9) return undefined;
  const first = digits.charCodeAt(0) - 48;
  if (n === 10 && first >= 6) return 'phone';
  if (n === 11 && first === 0 && digits.charCodeAt(1) >= 54) return 'phone';
  if (n === 12 && digits.startsWith('91') && digits.charCodeAt(2) >= 54 && match.startsWith('+')) return 'phone';
  if (n === 12 && first >= 2 && verhoeffValid(digits)) return 'aadhaar';
  if (n === 12 && digits.startsWith('91') && digits.charCodeAt(2) >= 54) return 'phone';
  if (n === 16 && verhoeffValid(digits)) return 'vid';
  if (n >= 13 && n <= 19 && luhnValid(digits)) return 'card';
  return 'number';
}

/** At, as an e-mail address is spoken or disguised: `[at]`, `(at)`, ` at `, ` at the rate `, ` एट `, or `@` itself before a spoken dot. */
const SPOKEN_AT = '(?: ?[\\[({<] ?(?:at|@) ?[\\])}>] ?| (?:at the rate(?: of)?|at|@|एट द रेट|एट|ऐट) |@)';
const SPOKEN_DOT = '(?: ?[\\[({<] ?dot ?[\\])}>] ?| (?:dot|डॉट|डोट) |\\.)';
const MAIL_PART = '[\\p{L}\\p{M}\\p{N}_%+-]{1,64}';
const MAIL_TLD = '(?:com|in|net|org|co|edu|gov|io|info|me|biz|ai|app|dev|us|uk|कॉम|कोम|इन)';
/** Words that end a told name: "my name is Meera Nair and …", "मेरा नाम मीरा नायर है". */
const NAME_STOP = 'and|aur|but|hai|hain|he|from|here|speaking|calling|please|sir|madam|ji|है|हैं|और|जी';
const NAME_WORD = `(?!(?:${NAME_STOP})${WE})[\\p{L}][\\p{L}\\p{M}'.-]{0,30}`;
/** Words that put a six-digit number in an address, in English and Hindi. */
const ADDRESS_WORDS =
  'road|rd|street|st|nagar|colony|sector|flat|house|plot|apartments?|apts?|society|lane|marg|chowk|layout|block|phase|floor|tower|near|opp|opposite|village|vill|district|dist|taluka?|tehsil|mandal|city|town|west|east|north|south|pin|pincode|pin code|नगर|मार्ग|रोड|गली|मोहल्ला|कॉलोनी|सेक्टर|फ्लैट|मकान|पिन|गांव|गाँव|ज़िला|जिला';
const normalized = (source: string) => source.normalize('NFKC');

/**
 * In order: each detector sees the text the ones before it left, and a masked value has too few
 * letters and digits left to match a later one.
 */
export const DETECTORS: readonly Detector[] = [
  { kind: 'email', minDigits: 0, minLength: 6, pattern: new RegExp(`[\\p{L}\\p{M}\\p{N}._%+-]{1,64}@[\\p{L}\\p{M}\\p{N}-]{1,63}(?:\\.[\\p{L}\\p{M}\\p{N}-]{1,63}){0,6}\\.\\p{L}{2,24}(?![\\p{L}\\p{M}\\p{N}])`, 'gu') },
  /** An e-mail address spoken or disguised: `meera dot nair at gmail dot com`, `meera[at]gmail[dot]com`. */
  {
    kind: 'email',
    minDigits: 0,
    minLength: 10,
    cue: new RegExp(normalized(`(?:^|[^\\p{L}])(?:at|एट|ऐट)(?:[^\\p{L}]|$)|[\\[({<] ?(?:at|@) ?[\\])}>]|@`), 'iu'),
    pattern: new RegExp(normalized(`${WB}${MAIL_PART}(?:${SPOKEN_DOT}${MAIL_PART}){0,4}${SPOKEN_AT}[\\p{L}\\p{M}\\p{N}-]{1,63}(?:${SPOKEN_DOT}[\\p{L}\\p{M}\\p{N}-]{1,63}){0,3}?${SPOKEN_DOT}${MAIL_TLD}${WE}`), 'giu'),
  },
  /** A UPI id, `name@okaxis` or `9876543210@ybl`: an address with a bank's handle and no domain. */
  { kind: 'upi', minDigits: 0, minLength: 5, pattern: new RegExp(`${WB}[\\p{L}\\p{M}\\p{N}._-]{2,64}@[A-Za-z]{2,32}(?![\\p{L}\\p{M}\\p{N}@])(?!\\.[A-Za-z])`, 'gu') },
  {
    kind: 'date',
    minDigits: 4,
    minLength: 6,
    maskWhole: true,
    pattern: new RegExp(
      normalized(
        // Numeric (year first, day first, month first, two-digit year, run together), then with the month named: `15th June 1987`, `15/Jun/1995`, `Jun. 15, 1995`, `15 जून 1995`.
        `${B}(?:${YEAR}${DATE_SEP}${MONTH}${DATE_SEP}${DAY}|${DAY}${DATE_SEP}${MONTH}${DATE_SEP}${YEAR}|${MONTH}[-/.]${DAY}[-/.]${YEAR}|${DAY2}[-/]${MONTH2}[-/]\\d{2}|${DAY2}${MONTH2}${YEAR}|` +
          `${DAY}(?:st|nd|rd|th)?${NAMED_SEP}(?:${MONTHS})\\.?${NAMED_SEP}${YEAR}|${DAY}[-/](?:${MONTHS})[-/]\\d{2}|(?:${MONTHS})\\.?[ -]?${DAY}(?:st|nd|rd|th)?,? ?${YEAR})${E}`,
      ),
      'gi',
    ),
  },
  /** A GSTIN: state code, the holder's PAN, entity number, `Z`, check character. */
  { kind: 'gstin', minDigits: 6, minLength: 15, pattern: new RegExp(`${B}\\d{2} ?[A-Z]{5} ?\\d{4} ?[A-Z] ?[0-9A-Z] ?Z ?[0-9A-Z]${E}`, 'gi') },
  /** A driving licence: state, RTO, year of issue, serial; `MH-12-2011-0012345`, `MH1220110012345`. */
  { kind: 'driving_licence', minDigits: 13, minLength: 15, pattern: new RegExp(`${B}(?:${STATES})${GROUP}?\\d{2}${GROUP}?(?:19|20)\\d{2}${GROUP}?\\d{7}${E}`, 'gi') },
  /** A vehicle registration: `MH 12 AB 1234`, `MH-12-AB-1234`, and the BH series `22 BH 1234 AA`. Spaced, only in capitals, which ordinary words are not. */
  { kind: 'vehicle', minDigits: 5, minLength: 8, pattern: new RegExp(`${B}(?:(?:${STATES})(?: ?- ?| )?\\d{1,2}(?: ?- ?| )?[A-Z]{1,3}(?: ?- ?| )?\\d{4}|\\d{2} ?BH ?\\d{4} ?[A-Z]{1,2})${E}`, 'g') },
  { kind: 'vehicle', minDigits: 5, minLength: 8, pattern: new RegExp(`${B}(?:${STATES})\\d{1,2}[A-Z]{1,3}\\d{4}${E}`, 'gi') },
  /** A mobile number written `(987) 654-3210`; every other grouping is a run of digits below. */
  { kind: 'phone', minDigits: 10, minLength: 12, pattern: new RegExp(`(?<![A-Za-z0-9+])(?:\\+91${GROUP}?|0091${GROUP}?|0)?\\([6-9]\\d{2}\\) ?\\d{3}${GROUP}?\\d{4}${E}`, 'g') },
  /** Aadhaar, VID, phone, card and account numbers, and any other run of digits long enough to be an identifier. */
  { kind: 'number', minDigits: 9, minLength: 9, pattern: new RegExp(`${B}\\+?\\d(?:${GROUP}?\\d){8,40}${E}`, 'g'), classify: classifyDigits },
  { kind: 'pan', minDigits: 4, minLength: 10, pattern: new RegExp(`${B}[A-Z]{5}${GROUP}?\\d{4}${GROUP}?[A-Z]${E}`, 'gi') },
  /** A PAN spelled out, a character at a time: `A B C D E 1 2 3 4 F`, `a-b-c-d-e-1-2-3-4-f` (digits said in words read as digits). */
  { kind: 'pan', minDigits: 4, minLength: 10, pattern: new RegExp(`${B}[A-Z](?:${SPELLED}[A-Z]){4}${SPELLED}\\d(?:${SPELLED}?\\d){3}${SPELLED}[A-Z]${E}`, 'gi') },
  { kind: 'voter_id', minDigits: 7, minLength: 10, pattern: new RegExp(`${B}[A-Z]{3}\\d{7}${E}`, 'gi') },
  { kind: 'passport', minDigits: 7, minLength: 8, pattern: new RegExp(`${B}[A-Z]\\d{7}${E}`, 'gi') },
  { kind: 'ifsc', minDigits: 1, minLength: 11, pattern: new RegExp(`${B}[A-Z]{4}0[A-Z0-9]{6}${E}`, 'gi') },
  /**
   * An address with its PIN code: from an address word (or the house number and up to two
   * capitalised words before it) to the six digits, within 160 characters.
   */
  {
    kind: 'address',
    minDigits: 6,
    minLength: 10,
    maskWhole: true,
    cue: new RegExp(normalized(`${WB}(?:${ADDRESS_WORDS})${WE}`), 'iu'),
    pattern: new RegExp(
      normalized(`${WB}(?:\\d[\\d/-]{0,7}[A-Za-z]?,? (?:\\p{Lu}[\\p{L}\\p{M}]{0,30},? ){0,2})?(?:${ADDRESS_WORDS})${WE}[^;!?]{0,160}?(?<!\\d)[1-8]\\d{2} ?\\d{3}(?![\\p{L}\\p{N}])`),
      'giu',
    ),
  },
  /** A name told: "my name is Meera Nair", "मेरा नाम मीरा नायर है", "mera naam …". */
  {
    kind: 'name',
    minDigits: 0,
    minLength: 10,
    maskWhole: true,
    cue: new RegExp(normalized('name|naam|नाम'), 'iu'),
    pattern: new RegExp(normalized(`(?<=${WB}(?:my (?:full )?name is|my name's|name is|मेरा नाम|mera naam|mera nam|mera naam hai)[:,]? )${NAME_WORD}(?: ${NAME_WORD}){0,2}`), 'giu'),
  },
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

/**
 * A key ending in `name` holds a person's name (`name`, `customer_name`, `nomineeName`,
 * `account_holder_name`, `surname`) unless it names a thing: fail closed, since what a person is
 * called is an identity value however the field is spelt.
 */
const NAME_KEY = /name$/;
export const THING_NAME_KEYS: readonly string[] = [
  'event_name', 'screen_name', 'display_name', 'file_name', 'filename', 'component_name', 'field_name', 'flow_name', 'step_name', 'stage_name',
  'rule_name', 'app_name', 'device_name', 'os_name', 'host_name', 'hostname', 'bank_name', 'branch_name', 'city_name', 'state_name', 'district_name',
  'country_name', 'package_name', 'class_name', 'room_name', 'agent_name', 'sdk_name', 'platform_name', 'browser_name', 'model_name', 'brand_name',
  'document_name', 'doc_name', 'document_type_name', 'key_name', 'queue_name', 'service_name', 'tag_name', 'type_name', 'variant_name', 'experiment_name',
  'feature_name', 'flag_name', 'campaign_name', 'network_name', 'carrier_name', 'product_name', 'plan_name', 'language_name', 'locale_name', 'popup_name',
  'button_name', 'page_name', 'activity_name', 'view_name', 'route_name', 'track_name', 'voice_name', 'metric_name', 'label_name', 'schema_name',
  'workflow_name', 'journey_name', 'error_name', 'exception_name', 'method_name', 'function_name', 'module_name', 'source_name', 'channel_name',
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
  /**
   * A listed identity key (the built-in list and PII_EXTRA_KEYS). Keys that hold a person's name
   * by their ending (`customer_name`) are masked in what clients send (`keyFacts`), but not read
   * so in the service's own state, where a `name` names a thing (an actor's readers).
   */
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
  const things = new Set(THING_NAME_KEYS.map(normalizeKey));
  const isSensitive = (normal: string) => sensitive.has(normal) || (NAME_KEY.test(normal) && !things.has(normal));
  const routing = new Set(ROUTING_KEYS);
  // Normalising a key costs more than the rest of its check: each key is looked at once.
  const seen = new Map<string, KeyFacts>();
  const factsOf = (key: string): KeyFacts => {
    // A routing key is never also sensitive: it is passed through as sent.
    const isRouting = routing.has(key);
    return { routing: isRouting, sensitive: !isRouting && isSensitive(normalizeKey(key)), otp: isOtpName(key), mayHoldIdentity: mayHoldIdentity(key), jsonBytes: jsonStringSize(key) + 1 };
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
    isSensitiveKey: (key) => !routing.has(key) && sensitive.has(normalizeKey(key)),
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

/** One star per UTF-16 unit: a mask keeps the length of what it replaced, so masks can be written back onto the text they came from. */
const stars = (char: string) => (char.length === 1 ? '*' : '**');
/** A letter (with its combining marks, so a Devanagari word leaves no vowel signs behind) or a digit. */
const MASKABLE = /[\p{L}\p{M}\p{N}]/gu;
const LETTER_OR_DIGIT = /[\p{L}\p{M}\p{N}]/u;

/** Every letter and digit starred, separators kept: what a date or an OTP is masked to. */
export const maskWhole = (value: string) => value.replace(MASKABLE, stars);

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

const NON_ASCII = /[^\x00-\x7f]/;
const KEEP_TAIL = 4;
const SHORT_VALUE = 8;

/**
 * Values of 8+ characters keep their last 4 characters and their separators; shorter
 * values are masked whole, because 4 of 6 characters would give most of an OTP away.
 */
export function maskValue(value: string): string {
  if (NON_ASCII.test(value)) {
    const chars = Array.from(value);
    if (chars.length < SHORT_VALUE) return chars.map(stars).join('');
    const tailStart = chars.length - KEEP_TAIL;
    return chars.map((char, index) => (index >= tailStart || !LETTER_OR_DIGIT.test(char) ? char : stars(char))).join('');
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
 * Words that may carry an identity value without a digit or an `@`: numbers in words, an e-mail
 * address spoken with "at", a name told. Only ASCII text with a space gets this far.
 */
const WORD_CUE =
  /(?:^|[^a-z])(?:zero|oh|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|[a-z]+teen|twenty|thirty|fou?rty|fifty|sixty|seventy|eighty|ninety|double|tripp?le|first|second|third|[a-z]+th|ek|do|teen|tin|chaa?r|paa?n?ch|chh?e[hy]?|chh?ah|saa?t|aa?th?|na[uo]|nou|shoo?nya|sunya|sifar|das|at|dot|name|naam|nam)(?:[^a-z]|$)|[[(<{] ?(?:at|@) ?[\])>}]/i;

/**
 * Whether `text` could hold an identity value at all: long enough, with a digit or an `@`, or
 * non-ASCII (other scripts' digits), or words a value can be said in. One pass over the
 * characters, no allocation: most strings of an event are short ids and stop here.
 */
export function mayHoldIdentity(text: string, otpContext = false): boolean {
  const length = text.length;
  if (length > MAX_SCAN_CHARS) return true;
  if (length < (otpContext ? OTP_DETECTOR.minLength : MIN_LENGTH)) return false;
  let spaced = false;
  for (let i = 0; i < length; i += 1) {
    const code = text.charCodeAt(i);
    if ((code >= 48 && code <= 57) || code === 64 || code > 127) return true;
    // Words said as a number are spaced, or joined by dashes or commas ("nine-eight-seven"); an
    // address disguised with a bracketed "at" needs no space at all ("meera[at]gmail[dot]com").
    if (code === 32 || code === 45 || code === 44 || code === 9 || code === 10 || code === 91 || code === 40 || code === 123 || code === 60) spaced = true;
  }
  return spaced && WORD_CUE.test(text);
}

/** Cues for the detectors that read words rather than digits; without any, a text with no digit and no `@` holds nothing. */
const LETTER_CUE = new RegExp(`(?:^|[^\\p{L}])(?:at|name|naam|nam)(?:[^\\p{L}]|$)|[[(<{] ?(?:at|@) ?[\\])>}]|एट|ऐट|नाम`, 'iu');

/**
 * Masks every detected identity value inside `text` (the rest stays readable) and says what it
 * found. Strings over the budget are not scanned but dropped with a marker.
 */
export function scrubText(input: string, otpContext = false): ScrubResult {
  if (input.length > MAX_SCAN_CHARS) {
    return { text: `[dropped: ${input.length} chars]`, findings: [{ kind: 'dropped', shape: { length: input.length, digits: 0, letters: 0, kind: 'dropped' } }], whole: 'dropped' };
  }
  if (!mayHoldIdentity(input, otpContext)) return clean(input);
  const view = readerView(input);
  const reading = readingOf(view);
  let text = reading?.text ?? view;
  const digits = countDigits(text);
  const hasAt = text.includes('@');
  if (digits === 0 && !hasAt && !LETTER_CUE.test(text)) return clean(input);
  const findings: Finding[] = [];
  let whole: PiiKind | undefined;
  let trimmed: string | undefined;
  const detectors = otpContext ? WITH_OTP : DETECTORS;
  for (const detector of detectors) {
    if (digits < detector.minDigits || text.length < detector.minLength) continue;
    if ((detector.kind === 'email' || detector.kind === 'upi') && detector.cue === undefined && !hasAt) continue;
    if (detector.cue && !detector.cue.test(text)) continue;
    // A test is far cheaper than a replace with a callback, and most strings match nothing.
    detector.pattern.lastIndex = 0;
    if (!detector.pattern.test(text)) continue;
    detector.pattern.lastIndex = 0;
    trimmed ??= text.trim();
    text = text.replace(detector.pattern, (match: string) => {
      const kind = detector.classify ? detector.classify(match) : detector.kind;
      if (kind === undefined) return match;
      findings.push({ kind, shape: shapeOf(match, kind) });
      if (match === trimmed) whole = kind;
      return detector.maskWhole ? maskWhole(match) : maskValue(match);
    });
  }
  if (findings.length === 0) return clean(input);
  return { text: reading ? writeBack(view, reading, text, maskWhole) : text, findings, whole };
}

/** The first detector that matches the whole of `value`, if any. */
export function detectWhole(value: string): PiiKind | undefined {
  return scrubText(value).whole;
}

/** Kinds masked whole wherever they are: any part of a date, a name or an address says too much. */
export const MASKED_WHOLE: ReadonlySet<PiiKind> = new Set(['date', 'otp', 'text', 'name', 'address']);

/**
 * A value under a sensitive key: masked whatever it looks like, with its shape. A recognised
 * identifier keeps its last four like a hint; dates, codes and text nothing recognises (a name,
 * an address) are masked whole, since a last four there would be a surname or a PIN code.
 */
export function maskKeyed(value: string): { text: string; shape: ValueShape } {
  if (value.length > MAX_SCAN_CHARS) return { text: `[dropped: ${value.length} chars]`, shape: { length: value.length, digits: 0, letters: 0, kind: 'dropped' } };
  const scan = scrubText(value);
  const kind = scan.whole ?? 'text';
  const text = MASKED_WHOLE.has(kind) ? maskWhole(value) : scan.text;
  return { text, shape: shapeOf(value, kind) };
}
