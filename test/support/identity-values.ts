import fc from 'fast-check';
import { verhoeffValid } from '../../src/privacy/check-digits.js';

/**
 * Generators of the identity values the redaction pass must catch, in the formats people and
 * SDKs write them, and of the ids that must stay readable. Shared by the property tests.
 */

const digit = fc.constantFrom(...'0123456789');
const upper = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZ');
const digits = (min: number, max = min) =>
  fc.array(digit, { minLength: min, maxLength: max }).map((chars) => chars.join(''));
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
  /**
   * A part of it that no surface may show even inside a longer text (the first groups of a
   * grouped number, the first words of a spoken one), where a mask keeps the last four or the
   * words around it are ordinary words.
   */
  secret?: string;
}

/** A PAN as typed (whole, grouped 5-4-1, in lower case) or spelled a character at a time (`A B C D E 1 2 3 4 F`). */
const pan = fc
  .tuple(
    uppers(5),
    digits(4),
    upper,
    fc.boolean(),
    fc.constantFrom('', ' ', '-', '.', '_'),
    fc.constantFrom(undefined, ' ', '-', ' - '),
  )
  .map(([a, b, c, lower, sep, spelled]) => {
    const written = spelled === undefined ? `${a}${sep}${b}${sep}${c}` : [...`${a}${b}${c}`].join(spelled);
    return lower ? written.toLowerCase() : written;
  });

const aadhaar = fc
  .tuple(fc.constantFrom(...'23456789'), digits(10), fc.constantFrom('', ' ', '-', '.', '/'))
  .map(([first, rest, sep]) => {
    const number = withVerhoeff(`${first}${rest}`);
    return sep === '' ? number : `${number.slice(0, 4)}${sep}${number.slice(4, 8)}${sep}${number.slice(8)}`;
  });

/** A 10-digit mobile number as people write it: whole, 5-5, 3-3-4 (with ` `, `-` or `.`), 4-3-3, `(987) 654-3210`. */
const phone = fc
  .tuple(
    fc.constantFrom('', '+91', '+91 ', '+91-', '0'),
    fc.constantFrom(...'6789'),
    digits(9),
    fc.integer({ min: 0, max: 7 }),
  )
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
  .tuple(
    emailPart,
    fc.option(emailPart, { nil: undefined }),
    emailPart,
    fc.constantFrom('com', 'in', 'co.in', 'org', 'example'),
  )
  .map(([local, more, domain, tld]) => `${local}${more ? `.${more}` : ''}@${domain}.${tld}`);

const MONTH_NAMES = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const date = fc
  .tuple(
    fc.integer({ min: 1940, max: 2012 }),
    fc.integer({ min: 1, max: 12 }),
    fc.integer({ min: 1, max: 28 }),
    fc.integer({ min: 0, max: 8 }),
  )
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
const ifsc = fc
  .tuple(uppers(4), fc.constantFrom(...'ABCDEFGHJKLMNPQRSTUVWXYZ0123456789'), digits(5))
  .map(([bank, a, branch]) => `${bank}0${a}${branch}`);
const passport = fc.tuple(upper, digits(7)).map(([letter, number]) => `${letter}${number}`);
const voterId = fc.tuple(uppers(3), digits(7)).map(([letters, number]) => `${letters}${number}`);

/** The identity values of the first detectors, each written the way its kind reads: the shape tests compare kind and length. */
export const classicValue: fc.Arbitrary<IdentityValue> = fc.oneof(
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

/** Every run of ten decimal digits Unicode lists (\p{Nd}), by its zero: each script's digits, Indian ones among them. */
export const DIGIT_ZEROS: readonly number[] = (() => {
  const zeros: number[] = [];
  let start = -1;
  for (let code = 0; code <= 0x20000; code += 1) {
    const digit = /\p{Nd}/u.test(String.fromCodePoint(code));
    if (digit && start < 0) start = code;
    if (!digit && start >= 0) {
      for (let zero = start; zero < code; zero += 10) zeros.push(zero);
      start = -1;
    }
  }
  return zeros;
})();
/** Every dash (\p{Pd} and the minus sign) and every space (\p{Zs}) Unicode lists, as a separator of groups. */
const unicodeClass = (pattern: RegExp) =>
  Array.from({ length: 0x10000 }, (_, code) => String.fromCharCode(code)).filter((char) => pattern.test(char));
export const DASHES: readonly string[] = [...unicodeClass(/\p{Pd}/u), '\u2212'];
export const SPACES: readonly string[] = unicodeClass(/\p{Zs}/u);
const separator = fc.constantFrom(...DASHES, ...SPACES, ' - ', ' ');

const inScript = (ascii: string, zero: number) => ascii.replace(/\d/g, (d) => String.fromCodePoint(zero + Number(d)));
const group = (digits: string, sizes: readonly number[], sep: string) => {
  const parts: string[] = [];
  let at = 0;
  for (const size of sizes) {
    parts.push(digits.slice(at, at + size));
    at += size;
  }
  if (at < digits.length) parts.push(digits.slice(at));
  return parts.join(sep);
};
/** What a mask may leave: all but the last `keep` characters of `raw` must never show. */
const withoutTail = (raw: string, keep = 5) => {
  const chars = Array.from(raw);
  return chars.slice(0, Math.max(1, chars.length - keep)).join('');
};

const mobile = fc.tuple(fc.constantFrom(...'6789'), digits(9)).map(([first, rest]) => `${first}${rest}`);

/** A mobile number in any script's digits, grouped 5-5, 3-3-4 or 4-3-3 with any dash or space. */
const scriptPhone = fc
  .tuple(mobile, fc.constantFrom(...DIGIT_ZEROS), fc.constantFrom([5], [3, 3], [4, 3]), separator)
  .map(([n, zero, sizes, sep]) => {
    const raw = inScript(group(n, sizes, sep), zero);
    return { kind: 'phone', raw, secret: withoutTail(raw, 6) };
  });

const ENGLISH = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];
const HINDI = ['शून्य', 'एक', 'दो', 'तीन', 'चार', 'पांच', 'छह', 'सात', 'आठ', 'नौ'];
const HINGLISH = ['shunya', 'ek', 'do', 'teen', 'char', 'paanch', 'chhe', 'saat', 'aath', 'nau'];

/** A number said digit by digit in English, Hindi or Hinglish, "double" for a repeated digit, the first digits perhaps typed. */
const spoken = (number: fc.Arbitrary<string>, kind: string) =>
  fc
    .tuple(
      number,
      fc.constantFrom(ENGLISH, HINDI, HINGLISH),
      fc.constantFrom(' ', ', ', '-'),
      fc.boolean(),
      fc.integer({ min: 0, max: 5 }),
    )
    .map(([n, words, sep, doubles, typed]) => {
      const said: string[] = [];
      for (let i = typed; i < n.length; i += 1) {
        if (doubles && words === ENGLISH && n[i] === n[i + 1]) {
          said.push(`double ${words[Number(n[i])]}`);
          i += 1;
        } else said.push(words[Number(n[i])]!);
      }
      const spokenPart = said.join(sep);
      const raw = typed > 0 ? `${n.slice(0, typed)} ${spokenPart}` : spokenPart;
      // The first five words said: what no surface may show.
      return { kind, raw, secret: said.slice(0, 5).join(sep) };
    });

const vid = fc.tuple(digits(15), separator).map(([prefix, sep]) => {
  const raw = group(withVerhoeff(`9${prefix.slice(1)}`), [4, 4, 4], sep);
  return { kind: 'vid', raw, secret: withoutTail(raw) };
});
const aadhaarGrouped = fc
  .tuple(fc.constantFrom(...'23456789'), digits(10), fc.constantFrom([4, 4], [3, 3, 3]), separator)
  .map(([first, rest, sizes, sep]) => {
    const raw = group(withVerhoeff(`${first}${rest}`), sizes, sep);
    return { kind: 'aadhaar', raw, secret: withoutTail(raw) };
  });
const cardOrAccount = fc
  .tuple(fc.constantFrom(...'123456789'), digits(11, 17), fc.constantFrom(' ', '-', '\u00a0', '\u2013'))
  .map(([first, rest, sep]) => {
    const raw = group(`${first}${rest}`, [4, 4, 4, 4], sep);
    return { kind: 'number', raw, secret: withoutTail(raw) };
  });
const gstin = fc
  .tuple(
    digits(2),
    pan.filter((p) => /^[A-Z]{5}\d{4}[A-Z]$/.test(p)),
    fc.constantFrom(...'123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'),
    fc.constantFrom(...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'),
  )
  .map(([state, holder, entity, check]) => ({
    kind: 'gstin',
    raw: `${state}${holder}${entity}Z${check}`,
    secret: holder.slice(0, 6),
  }));
const STATES = ['MH', 'DL', 'KA', 'TN', 'UP', 'GJ', 'WB', 'RJ', 'KL', 'AP', 'TS', 'HR', 'PB', 'MP', 'BR', 'OD'];
const drivingLicence = fc
  .tuple(
    fc.constantFrom(...STATES),
    digits(2),
    fc.integer({ min: 1980, max: 2025 }),
    digits(7),
    fc.constantFrom('', '-', ' '),
  )
  .map(([state, rto, year, serial, sep]) => {
    const raw = [state, rto, String(year), serial].join(sep);
    return { kind: 'driving_licence', raw, secret: withoutTail(raw) };
  });
const vehicle = fc
  .tuple(fc.constantFrom(...STATES), digits(2), uppers(2), digits(4), fc.constantFrom('', ' ', '-'))
  .map(([state, rto, series, number, sep]) => {
    const raw = [state, rto, series, number].join(sep);
    return { kind: 'vehicle', raw, secret: withoutTail(raw) };
  });
const local = fc.stringMatching(/^[a-z][a-z0-9]{2,10}$/);
const upi = fc
  .tuple(
    fc.oneof(local, mobile),
    fc.constantFrom('okaxis', 'oksbi', 'okhdfcbank', 'okicici', 'ybl', 'ibl', 'paytm', 'upi', 'apl'),
  )
  .map(([name, handle]) => ({ kind: 'upi', raw: `${name}@${handle}`, secret: `${name}@` }));
/** An e-mail address disguised or spoken: `[at]`, `(at)`, ` at `, ` at the rate `, `dot`, a Devanagari local part. */
const disguisedEmail = fc
  .tuple(
    fc.oneof(local, fc.constantFrom('मीरा', 'राहुल', 'प्रिया')),
    fc.option(local, { nil: undefined }),
    fc.constantFrom(' at ', '[at]', '(at)', ' [at] ', ' at the rate ', ' (at) ', '@'),
    local,
    fc.constantFrom(' dot ', '[dot]', '.', ' (dot) '),
    fc.constantFrom('com', 'in', 'co', 'org'),
  )
  .filter(([, , at, , dot]) => at !== '@' || dot !== '.')
  .map(([name, more, at, domain, dot, tld]) => {
    const who = more === undefined ? name : `${name}${dot}${more}`;
    return { kind: 'email', raw: `${who}${at}${domain}${dot}${tld}`, secret: `${who}${at}` };
  });
const newDate = fc
  .tuple(
    fc.integer({ min: 1940, max: 2012 }),
    fc.integer({ min: 1, max: 12 }),
    fc.integer({ min: 1, max: 28 }),
    fc.integer({ min: 0, max: 5 }),
  )
  .map(([year, month, day, format]) => {
    const dd = String(day).padStart(2, '0');
    const mm = String(month).padStart(2, '0');
    const hindi = ['जनवरी', 'फ़रवरी', 'मार्च', 'अप्रैल', 'मई', 'जून', 'जुलाई', 'अगस्त', 'सितंबर', 'अक्टूबर', 'नवंबर', 'दिसंबर'][
      month - 1
    ];
    const raw = [
      `${dd}/${MONTH_NAMES[month - 1]}/${year}`,
      `${dd}${mm}${year}`,
      `${dd}-${mm}-${String(year).slice(2)}`,
      `${dd} / ${mm} / ${year}`,
      `${day} ${hindi} ${year}`,
      `${dd}\u2013${mm}\u2013${year}`,
    ][format]!;
    return { kind: 'date', raw };
  });
const address = fc
  .tuple(
    fc.integer({ min: 1, max: 999 }),
    fc.constantFrom('Shanti', 'Sai Krupa', 'Green Park', 'Lotus'),
    fc.constantFrom('Apartments', 'Society', 'Colony', 'Nagar'),
    fc.constantFrom('Andheri West', 'Koramangala', 'Salt Lake', 'Banjara Hills'),
    fc.constantFrom('Mumbai', 'Bengaluru', 'Kolkata', 'Hyderabad'),
    fc.integer({ min: 110001, max: 855999 }),
  )
  .map(([house, name, kind, area, city, pin]) => ({
    kind: 'address',
    raw: `Flat ${house}, ${name} ${kind}, ${area}, ${city} ${pin}`,
    secret: `${name} ${kind}`,
  }));

/** Separators, invisible characters and look-alikes an adversarial review got past the detectors with. */
const ODD_SEPARATORS = [
  ',',
  '|',
  ':',
  ' -- ',
  ' | ',
  ', ',
  ';',
  '~',
  '·',
  '•',
  ' + ',
  '*',
  "'",
  '#',
  '...',
  ' --- ',
  '\\',
  '、',
  '\u2028',
  '] [',
];
const oddlyGroupedPhone = fc
  .tuple(mobile, fc.constantFrom(...ODD_SEPARATORS, '('), fc.constantFrom('', '+91 '))
  .map(([n, sep, prefix]) => {
    const raw = `${prefix}${sep === '(' ? `(${n.slice(0, 5)}) ${n.slice(5)}` : `${n.slice(0, 5)}${sep}${n.slice(5)}`}`;
    return { kind: 'phone', raw, secret: withoutTail(raw, 5) };
  });
const oddlyGroupedAadhaar = fc
  .tuple(fc.constantFrom(...'23456789'), digits(10), fc.constantFrom(...ODD_SEPARATORS))
  .map(([first, rest, sep]) => {
    const raw = group(withVerhoeff(`${first}${rest}`), [4, 4], sep);
    return { kind: 'aadhaar', raw, secret: withoutTail(raw) };
  });
/** A mobile number with a mark on every digit: a keycap (`9️⃣`) or an underline (`9̲`). */
const markedDigits = fc.tuple(mobile, fc.constantFrom('\ufe0f\u20e3', '\u20e3', '\u0332')).map(([n, mark]) => {
  const raw = [...n].map((d) => `${d}${mark}`).join('');
  return { kind: 'phone', raw, secret: withoutTail(raw, 5 * [...mark].length + 5) };
});
/** Characters Unicode draws as nothing (Default_Ignorable_Code_Point) that are not format characters, and the braille blank. */
const INVISIBLES = ['\u034f', '\ufe0f', '\u180b', '\u{e0100}', '\u17b4', '\u115f', '\u3164', '\u2800'];
const invisiblySplit = fc
  .tuple(
    fc.oneof(
      pan.filter((p) => /^[A-Z]{5}\d{4}[A-Z]$/.test(p)),
      mobile,
    ),
    fc.constantFrom(...INVISIBLES),
    fc.integer({ min: 1, max: 8 }),
  )
  .map(([value, invisible, at]) => {
    const raw = `${value.slice(0, at)}${invisible}${value.slice(at)}`;
    return { kind: /^\d/.test(value) ? 'phone' : 'pan', raw, secret: withoutTail(raw) };
  });
/** Digits in dingbat circles (`❶`, `➀`, `⓿`), capitals in negative circles and squares (`🅐`, `🅰`), Cyrillic and Greek capitals that look Latin. */
const dingbatDigit = (d: string, style: number) =>
  d === '0' ? '\u24ff' : String.fromCodePoint([0x2776, 0x2780, 0x278a][style]! + Number(d) - 1);
const CYRILLIC_OR_GREEK: Record<string, string> = {
  A: 'А',
  B: 'В',
  C: 'С',
  E: 'Е',
  H: 'Н',
  K: 'К',
  M: 'М',
  O: 'О',
  P: 'Р',
  T: 'Т',
  X: 'Х',
  Z: 'Ζ',
  N: 'Ν',
  I: 'І',
};
const SMALL_CAPITALS: Record<string, string> = {
  A: 'ᴀ',
  B: 'ʙ',
  C: 'ᴄ',
  D: 'ᴅ',
  E: 'ᴇ',
  F: 'ꜰ',
  G: 'ɢ',
  H: 'ʜ',
  I: 'ɪ',
  J: 'ᴊ',
  K: 'ᴋ',
  L: 'ʟ',
  M: 'ᴍ',
  N: 'ɴ',
  O: 'ᴏ',
  P: 'ᴘ',
  R: 'ʀ',
  S: 'ꜱ',
  T: 'ᴛ',
  U: 'ᴜ',
  V: 'ᴠ',
  W: 'ᴡ',
  Y: 'ʏ',
  Z: 'ᴢ',
};
const lookalike = fc.oneof(
  fc.tuple(mobile, fc.integer({ min: 0, max: 2 })).map(([n, style]) => {
    const raw = [...n].map((d) => dingbatDigit(d, style)).join('');
    return { kind: 'phone', raw, secret: withoutTail(raw) };
  }),
  fc
    .tuple(
      pan.filter((p) => /^[A-Z]{5}\d{4}[A-Z]$/.test(p)),
      fc.constantFrom(0x1f150, 0x1f170, 0x1f110, 0, 1),
    )
    .map(([value, letters]) => {
      const lookalike = (char: string) =>
        letters === 0
          ? (CYRILLIC_OR_GREEK[char] ?? char)
          : letters === 1
            ? (SMALL_CAPITALS[char] ?? char)
            : String.fromCodePoint(letters + char.charCodeAt(0) - 65);
      const raw = [...value].map((char) => (/\d/.test(char) ? char : lookalike(char))).join('');
      return { kind: 'pan', raw, secret: withoutTail(raw) };
    }),
);
const FULL_MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const moreDates = fc
  .tuple(
    fc.integer({ min: 1940, max: 2012 }),
    fc.integer({ min: 1, max: 12 }),
    fc.integer({ min: 1, max: 28 }),
    fc.integer({ min: 0, max: 4 }),
  )
  .map(([year, month, day, format]) => {
    const dd = String(day).padStart(2, '0');
    const mm = String(month).padStart(2, '0');
    const yy = String(year).slice(2);
    const raw = [
      `${day}th of ${FULL_MONTHS[month - 1]} ${year}`,
      `${day} ${MONTH_NAMES[month - 1]} ${yy}`,
      `${FULL_MONTHS[month - 1]} ${day} ${yy}`,
      `${year} ${FULL_MONTHS[month - 1]} ${day}`,
      `${year}${mm}${dd}`,
    ][format]!;
    return { kind: 'date', raw };
  });

/** The forms found leaking: how Indian users type and say identity values, and what an adversarial review got past the detectors with. */
export const indianForm: fc.Arbitrary<IdentityValue> = fc.oneof(
  oddlyGroupedPhone,
  oddlyGroupedAadhaar,
  markedDigits,
  invisiblySplit,
  lookalike,
  moreDates,
  scriptPhone,
  spoken(mobile, 'phone'),
  spoken(
    fc.tuple(fc.constantFrom(...'23456789'), digits(10)).map(([first, rest]) => withVerhoeff(`${first}${rest}`)),
    'aadhaar',
  ),
  vid,
  aadhaarGrouped,
  cardOrAccount,
  gstin,
  drivingLicence,
  vehicle,
  upi,
  disguisedEmail,
  newDate,
  address,
);

export const identityValue: fc.Arbitrary<IdentityValue> = fc.oneof(
  { weight: 1, arbitrary: classicValue },
  { weight: 1, arbitrary: indianForm },
);

/**
 * Whether any of `value` shows in `text`: the value itself, or the part of it no mask keeps where a
 * token starts. Searched anywhere, a phone's secret is 6 digits, which numbers the service writes
 * can hold inside them: a CI run failed on no leak for the secret 992254 while the clock's epoch
 * milliseconds read 1795989922…, which log lines' times carry.
 */
export const leaks = (text: string, value: IdentityValue): boolean =>
  findRaw(text, value.raw) || (value.secret !== undefined && startsToken(text, value.secret));

/**
 * A one-time code: caught only where a field is about an OTP. Six digits: shorter runs of digits
 * are everywhere in what the service writes (ids, counts, UUID segments), so a search for one
 * would find those; 4-digit codes are covered by example tests.
 */
export const otpValue = digits(6).map((raw) => ({ kind: 'otp', raw }));

/** Ids the deployed SDKs send (docs/decisions/0017-what-the-deployed-sdks-do.md) and their like: they must come back exactly as sent. */
export const NEAR_MISSES = [
  'pan_details',
  'phone_otp',
  'digilocker_aadhaar',
  'upload_aadhaar_front',
  'PAN_DETAILS',
  'DIGILOCKER_AADHAAR',
  'pan_field',
  'phone_otp_field',
  'aadhaar_digilocker_field',
  'email_otp',
  'pan_number',
  'aadhaar_number',
  'father_name',
  'pan_format_v1',
  'phone_otp_verify_v1',
  'aadhaar_length_v1',
  'harness_validation_v1',
  'otp_email_v1',
  'retry_pan_01',
  'retake_selfie_01',
  'pan_invalid_format',
  'phone_otp_expired',
  'aadhaar_incomplete',
  'invalid_pan_format',
  'incomplete_otp',
  'invalid_length_or_format',
  'phone_invalid_format',
  'kyc_onboarding',
  'PAN_ENTRY',
  'AADHAAR_VERIFICATION',
  'PAN_FORMAT',
  'OTP_VERIFY',
  'new_pan_entry',
  'n_otp_verify',
  'kyc_step_started',
  'voice_session_ended',
  'popup_reason_code',
  'screen_21',
  'v2',
  '2.4.1',
  'kycis_demo',
  'file_uploaded.png',
];
export const nearMiss = fc.constantFrom(...NEAR_MISSES);

/** Where in a string the value sits: alone, or inside words a person or an app would write. */
export const embed = (raw: string) =>
  fc.constantFrom(raw, `my number is ${raw}`, `${raw}.`, `value=${raw}; retry`, `(${raw})`, `Sent: "${raw}" by user`);

/** Field names that are not identity-named: only the detectors can catch what they hold. */
export const plainKey = fc.constantFrom(
  'note',
  'data',
  'extra',
  'info',
  'label',
  'message',
  'detail',
  'payload',
  'meta',
  'misc',
  'x',
  'comment',
  'display_name',
);
/** Identity-named fields, in the spellings clients use. */
export const sensitiveKey = fc.constantFrom(
  'phone',
  'mobileNumber',
  'email',
  'EMAIL',
  'pan',
  'panNumber',
  'aadhaar',
  'aadhaar-number',
  'dob',
  'otp',
  'account_number',
  'full_name',
  'fatherName',
  'address',
  'value',
  'input_value',
  'raw',
  'transcript',
);

export const EVENT_TYPES = [
  'component_input',
  'validation_failed',
  'screen_state',
  'analytics_data',
  'identity',
  'user_enrichment',
  'voice_conversation_turn',
  'error_reported',
  'screen_schema',
  'screen_schema_lazy',
  'validation_error',
  'telephony_call_state',
  'workflow_model',
  'custom_future_event',
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

/** A letter, digit or mask's star ending the text: what may not stand before a found value (`******3210` keeps a tail). */
const ENDS_WORDY_OR_STAR = /[\p{L}\p{N}*]$/u;
/** A letter or digit starting the text: what may not follow a found value. */
const STARTS_WORDY = /^[\p{L}\p{N}]/u;

/**
 * Whether `part` occurs in `text` (ignoring case when `ignoreCase`) with no letter, digit or star
 * before it and, when `endsToken`, no letter or digit after it. The same as one RegExp with a
 * lookbehind and a lookahead of `\p{L}\p{N}`, but that RegExp, compiled for each new value with
 * `iu`, cost about 0.9 ms a call (the Unicode case closure of the classes), and the redaction
 * property tests call it thousands of times; a literal search with the boundaries checked apart
 * costs about 30 µs (test/domain/event-redaction.property.test.ts went from 13.7 s to 7.7 s).
 */
function findToken(text: string, part: string, ignoreCase: boolean, endsToken: boolean): boolean {
  const search = new RegExp(escaped(part), ignoreCase ? 'giu' : 'gu');
  for (let found = search.exec(text); found; found = search.exec(text)) {
    // Two code units either side: a `u` RegExp reads a surrogate pair there as one code point.
    const before = text.slice(Math.max(0, found.index - 2), found.index);
    const end = found.index + found[0].length;
    if (!ENDS_WORDY_OR_STAR.test(before) && !(endsToken && STARTS_WORDY.test(text.slice(end, end + 2)))) return true;
    // Overlapping occurrences count too: look again from the next code point (not inside a
    // surrogate pair, where a `u` search would step back and find this one again).
    search.lastIndex = found.index + ((text.codePointAt(found.index) ?? 0) > 0xffff ? 2 : 1);
  }
  return false;
}

/**
 * Where `raw` appears in `text` as the value itself: not inside a longer run of letters and
 * digits (a hex trace id, a timestamp), nor as the tail a mask keeps (`******3210`).
 */
export const findRaw = (text: string, raw: string): boolean => findToken(text, raw, true, true);

/** Where `part` appears in `text` not inside a longer run of letters and digits, nor after a mask's stars; what follows it may be anything (a mask). */
const startsToken = (text: string, part: string): boolean => findToken(text, part, false, false);
