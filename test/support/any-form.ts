import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { BUNDLED_KB_FILE } from '../../src/integrations/knowledge-base.js';
import { luhnValid } from '../../src/privacy/check-digits.js';
import { readerView } from '../../src/privacy/plain-text.js';
import { readingOf } from '../../src/privacy/reading.js';
import { withVerhoeff } from './identity-values.js';

/**
 * Identity values of every kind docs/explanation/privacy.md names, written in forms no list holds: digits of
 * random scripts or said in English, Hindi or Hinglish words, groups of random sizes split by
 * random separators, letters in random case or spelled one by one, handles said aloud, dates in
 * any order with months in Indian languages, names after labels, addresses. Built from the kinds,
 * not from a list of forms, so a test cannot be tuned to the forms it knows.
 */
export interface AnyForm {
  kind: string;
  /** As the client sends it. */
  raw: string;
  /**
   * What no surface may show, as letters and digits read (any script's digits as ASCII, number
   * words as digits, upper case, separators gone): the value, less the last four digits a mask
   * may keep of a mobile number or an Aadhaar.
   */
  core: string;
}

const ZEROS = [0x30, 0x966, 0x9e6, 0xa66, 0xae6, 0xbe6, 0xc66, 0xce6, 0xd66, 0xff10];
const ENGLISH = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];
const HINDI = ['शून्य', 'एक', 'दो', 'तीन', 'चार', 'पांच', 'छह', 'सात', 'आठ', 'नौ'];
const HINGLISH = ['shunya', 'ek', 'do', 'teen', 'char', 'paanch', 'chhe', 'saat', 'aath', 'nau'];
const SEPARATORS = [' ', '-', '.', '/', '_', ',', '\r', ' - ', ' . ', '\u2013', '\u00a0', ', ', ' / '];
const MONTHS = [
  ['January', 'जनवरी', 'জানুয়ারি', 'ஜனவரி', 'జనవరి', 'ಜನವರಿ', 'ജനുവരി', 'જાન્યુઆરી', 'ਜਨਵਰੀ', 'Jan'],
  ['August', 'अगस्त', 'আগস্ট', 'ஆகஸ்ட்', 'ఆగస్టు', 'ಆಗಸ್ಟ್', 'ഓഗസ്റ്റ്', 'ઓગસ્ટ', 'ਅਗਸਤ', 'Aug'],
  ['December', 'दिसंबर', 'ডিসেম্বর', 'டிசம்பர்', 'డిసెంబర్', 'ಡಿಸೆಂಬರ್', 'ഡിസംബർ', 'ડિસેમ્બર', 'ਦਸੰਬਰ', 'Dec'],
];
const MONTH_NUMBERS = ['01', '08', '12'];

const digitString = (length: number, first = '123456789') =>
  fc
    .tuple(
      fc.constantFrom(...first),
      fc.array(fc.constantFrom(...'0123456789'), { minLength: length - 1, maxLength: length - 1 }),
    )
    .map(([head, rest]) => head + rest.join(''));

/** Digits as written: one script throughout, or said in one language's words. */
const digitWriting = fc.oneof(
  fc.constantFrom(...ZEROS).map((zero) => (digit: string) => String.fromCodePoint(zero + Number(digit))),
  fc.constantFrom(ENGLISH, HINDI, HINGLISH).map((words) => (digit: string) => words[Number(digit)]!),
);

/** Digits in groups of random sizes with random separators between them. */
function grouped(digits: string): fc.Arbitrary<string> {
  return fc
    .tuple(
      digitWriting,
      fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 12 }),
      fc.constantFrom(...SEPARATORS),
      fc.boolean(),
    )
    .map(([write, sizes, separator, spaceWords]) => {
      const words = write('1').length > 1;
      const groups: string[] = [];
      let at = 0;
      for (const size of [...sizes, digits.length]) {
        if (at >= digits.length) break;
        const part = digits.slice(at, at + size);
        at += size;
        groups.push([...part].map(write).join(words || spaceWords ? ' ' : ''));
      }
      return groups.join(words && separator === '' ? ' ' : separator);
    });
}

/** Letters in random case, or spelled a letter at a time. */
const lettered = (letters: string) =>
  fc
    .tuple(fc.boolean(), fc.constantFrom('', ' ', '-', '.', ' '))
    .map(([lower, between]) => [...(lower ? letters.toLowerCase() : letters)].join(between));

const upper = (length: number) =>
  fc
    .array(fc.constantFrom(...'ABCDEFGHJKLMNPRSTUVWXYZ'), { minLength: length, maxLength: length })
    .map((chars) => chars.join(''));
const syllable = fc.constantFrom(
  'ra',
  'vi',
  'ku',
  'mar',
  'pri',
  'ya',
  'sha',
  'rma',
  'ni',
  'sha',
  'an',
  'ja',
  'li',
  'deep',
  'ak',
  'sun',
  'ita',
  'ro',
  'han',
  'mal',
  'ho',
  'tra',
);
const word = fc.array(syllable, { minLength: 2, maxLength: 3 }).map((parts) => parts.join(''));
const properName = word.map((w) => w.charAt(0).toUpperCase() + w.slice(1));

/** A number with random grouping and writing, of the digits given; a mask may keep the last four of `keepsLastFour` ones. */
/**
 * The numbers in the service's own texts, which any surface that shows those texts holds: a value
 * whose digits are one of them is found there without having leaked (a long run planted the OTP
 * 2026 and found it in the knowledge base's version, `kyc_onboarding-2026.11`).
 */
const SERVICE_NUMBERS = new Set(readFileSync(BUNDLED_KB_FILE, 'utf8').match(/\d{4,}/g));

const numberOf = (kind: string, digits: fc.Arbitrary<string>, keepsLastFour = false) =>
  digits
    .filter((value) => !SERVICE_NUMBERS.has(value))
    .chain((value) => grouped(value).map((raw) => ({ kind, raw, core: keepsLastFour ? value.slice(0, -4) : value })));

/** A code of letters and digits (PAN, passport, voter id, IFSC, GSTIN): letters and digits each written their own way, parts split. */
const codeOf = (kind: string, parts: fc.Arbitrary<(string | { digits: string })[]>) =>
  parts.chain((pieces) =>
    fc
      .tuple(
        ...pieces.map((piece) => (typeof piece === 'string' ? lettered(piece) : grouped(piece.digits))),
        fc.constantFrom(' ', '', '-', '_', '.', ' - '),
      )
      .map((written) => {
        const chosen = written.pop() as string;
        // Number words are words: written or transcribed, a space or a mark stands between them and letters.
        const inWords = pieces.some(
          (piece, index) => typeof piece !== 'string' && /\p{L}/u.test(written[index] as string),
        );
        const separator = chosen === '' && inWords ? ' ' : chosen;
        return {
          kind,
          raw: (written as string[]).join(separator),
          core: pieces.map((piece) => (typeof piece === 'string' ? piece : piece.digits)).join(''),
        };
      }),
  );

const handle = fc
  .tuple(
    word,
    fc.option(word, { nil: undefined }),
    fc.constantFrom('gmail', 'okicici', 'ybl', 'paytm', 'yahoo', 'oksbi', 'rediffmail'),
    fc.constantFrom('@', ' @ ', ' at ', ' (at) ', ' [at] ', ' at the rate '),
    fc.constantFrom('', '.com', ' dot com', ' . com', '.in'),
    fc.constantFrom('.', '_', ' dot ', ' underscore '),
  )
  .map(([first, second, provider, at, tail, joiner]) => {
    const local = second === undefined ? first : `${first}${joiner}${second}`;
    return {
      kind: 'handle',
      raw: `${local}${at}${provider}${tail}`,
      core: (second === undefined ? first : first + second).toUpperCase(),
    };
  });

const date = fc
  .tuple(
    fc.integer({ min: 1, max: 28 }),
    fc.integer({ min: 0, max: 2 }),
    fc.integer({ min: 1950, max: 2006 }),
    fc.integer({ min: 0, max: 9 }),
    fc.constantFrom('dmy', 'ymd', 'mdy', 'named', 'named-year-first'),
    fc.constantFrom('/', '-', '.', ' ', ' / '),
    digitWriting,
  )
  .map(([day, month, year, language, order, separator, write]) => {
    const d = String(day).padStart(2, '0');
    const y = String(year);
    const w = (digits: string) => [...digits].map(write).join(write('1').length > 1 ? ' ' : '');
    const m = MONTH_NUMBERS[month]!;
    const raw =
      order === 'dmy'
        ? [w(d), w(m), w(y)].join(separator)
        : order === 'ymd'
          ? [w(y), w(m), w(d)].join(separator)
          : order === 'mdy'
            ? [w(m), w(d), w(y)].join(separator)
            : order === 'named'
              ? `${w(d)} ${MONTHS[month]![language]!} ${w(y)}`
              : `${w(y)} ${MONTHS[month]![language]!} ${w(d)}`;
    const core =
      order === 'dmy' || order === 'named'
        ? d + m + y
        : order === 'ymd' || order === 'named-year-first'
          ? y + m + d
          : m + d + y;
    return { kind: 'date', raw, core: order.startsWith('named') ? core.replace(m, '') : core };
  });

const LABELS = [
  'Name: ',
  'my name is ',
  'I am ',
  'this is ',
  'mera naam ',
  'मेरा नाम ',
  'naam hai ',
  'applicant: ',
  'c/o ',
  'Mr. ',
  'Dr ',
  'Smt. ',
  'surname ',
  'श्रीमती ',
];
const name = fc
  .tuple(fc.constantFrom(...LABELS), properName, properName, fc.constantFrom('', ' speaking', ' hai', ' here'))
  .map(([label, first, last, after]) => ({
    kind: 'name',
    raw: `${label}${first} ${last}${after}`,
    core: `${first}${last}`.toUpperCase(),
  }));

/** A name in a Hindi frame: "main … hoon" (I am …), "… bol raha hoon" (… speaking). */
const framedName = fc.tuple(properName, properName, fc.boolean()).map(([first, last, before]) => ({
  kind: 'name',
  raw: before ? `main ${first} ${last} hoon` : `${first} ${last} bol raha hoon`,
  core: `${first}${last}`.toUpperCase(),
}));

/** A document's letters told after its label, with words between and no digit beside them (`PAN first part AQWPV`). */
const labelledLetters = fc
  .tuple(
    fc.constantFrom('PAN', 'pan', 'passport', 'voter id', 'IFSC', 'GSTIN', 'पैन'),
    fc.constantFrom(' ', ': ', ' first part ', ' ka pehla hissa ', ' starts with ', ' is '),
    upper(5),
  )
  .map(([label, between, letters]) => ({ kind: 'pan', raw: `${label}${between}${letters}`, core: letters }));

const SPELLING = [
  'alpha',
  'bravo',
  'charlie',
  'delta',
  'echo',
  'foxtrot',
  'golf',
  'hotel',
  'india',
  'juliet',
  'kilo',
  'lima',
  'mike',
  'november',
  'oscar',
  'papa',
  'quebec',
  'romeo',
  'sierra',
  'tango',
  'uniform',
  'victor',
  'whiskey',
  'xray',
  'yankee',
  'zulu',
];
const CITIES = [
  'Agra',
  'Bombay',
  'Chennai',
  'Delhi',
  'Erode',
  'Faridabad',
  'Goa',
  'Hyderabad',
  'Indore',
  'Jaipur',
  'Kolkata',
  'Lucknow',
  'Mumbai',
  'Nagpur',
  'Ooty',
  'Pune',
  'Queen',
  'Ranchi',
  'Surat',
  'Thane',
  'Udaipur',
  'Vellore',
  'Warangal',
  'Xray',
  'Yamuna',
  'Zebra',
];
/** Letters spelled with words: the spelling alphabet, or "B for Bombay". */
const spelledWords = fc
  .tuple(
    fc.array(fc.integer({ min: 0, max: 25 }), { minLength: 3, maxLength: 6 }),
    fc.boolean(),
    fc.constantFrom(' ', ', ', ' - '),
  )
  .map(([letters, alphabet, separator]) => {
    const words = letters.map((index) =>
      alphabet ? SPELLING[index]! : `${String.fromCharCode(65 + index)} for ${CITIES[index]!}`,
    );
    return {
      kind: 'pan',
      raw: words.join(separator),
      core: letters
        .map((index) => (alphabet ? SPELLING[index]! : `${String.fromCharCode(65 + index)}FOR${CITIES[index]!}`))
        .join('')
        .toUpperCase(),
    };
  });

const address = fc
  .tuple(
    fc.integer({ min: 1, max: 999 }),
    properName,
    fc.constantFrom('Road', 'Marg', 'Nagar', 'Street', 'Lane', 'Colony'),
    properName,
    digitString(6, '12345678'),
    fc.constantFrom(' ', '-', ' - '),
  )
  .map(([house, street, road, city, pin, split]) => ({
    kind: 'address',
    raw: `House ${house}, ${street} ${road}, ${city} ${pin.slice(0, 3)}${split}${pin.slice(3)}`,
    core: `${street}${road}${city}`.toUpperCase(),
  }));

const card = digitString(15, '456').map((prefix) => {
  for (let check = 0; check <= 9; check += 1) if (luhnValid(`${prefix}${check}`)) return `${prefix}${check}`;
  return `${prefix}0`;
});

export const anyForm: fc.Arbitrary<AnyForm> = fc.oneof(
  numberOf('phone', digitString(10, '6789'), true),
  numberOf('aadhaar', digitString(11, '23456789').map(withVerhoeff), true),
  numberOf('vid', digitString(15).map(withVerhoeff)),
  numberOf('card', card),
  numberOf(
    'account',
    fc.integer({ min: 9, max: 18 }).chain((length) => digitString(length)),
  ),
  numberOf(
    'otp',
    fc.integer({ min: 4, max: 8 }).chain((length) => digitString(length)),
  ),
  codeOf(
    'pan',
    fc.tuple(upper(5), digitString(4), upper(1)).map(([a, d, b]) => [a.slice(0, 3), a.slice(3), { digits: d }, b]),
  ),
  codeOf(
    'passport',
    fc.tuple(upper(1), digitString(7)).map(([a, d]) => [a, { digits: d }]),
  ),
  codeOf(
    'voter_id',
    fc.tuple(upper(3), digitString(7)).map(([a, d]) => [a, { digits: d }]),
  ),
  codeOf(
    'ifsc',
    fc.tuple(upper(4), digitString(6)).map(([a, d]) => [a, { digits: `0${d}` }]),
  ),
  codeOf(
    'gstin',
    fc
      .tuple(digitString(2), upper(5), digitString(4), upper(1))
      .map(([s, a, d, b]) => [{ digits: s }, a, { digits: d }, `${b}1Z5`]),
  ),
  codeOf(
    'licence',
    fc.tuple(fc.constantFrom('MH', 'KA', 'DL', 'TN'), digitString(13)).map(([state, d]) => [state, { digits: d }]),
  ),
  handle,
  date,
  name,
  framedName,
  labelledLetters,
  spelledWords,
  address,
);

/** A text as the rule reads it (its plain view, number words and other scripts read as digits), separators kept. */
function readingText(text: string): string {
  const view = readerView(text);
  return readingOf(view)?.text ?? view;
}

/** A text read as the rule reads it, letters and digits only, upper case: where a value's `core` is looked for. */
export function readAs(text: string): string {
  return readingText(text)
    .replace(/[^\p{L}\p{N}]+/gu, '')
    .toUpperCase();
}

/** A letter, mark or digit: what a letters-only core may not touch on either side. */
const WORD_CHARACTER = '[\\p{L}\\p{M}\\p{N}]';
/** What may stand between a spelled core's letters. */
const BETWEEN_LETTERS = '[^\\p{L}\\p{M}\\p{N}]*';

/**
 * Whether `text`, whose `readAs` is `read`, shows `core`. A core with a digit is looked for across
 * separators in the read form. A core of letters only must stand as a word there, its letters
 * together or spaced out as spelled: five random capitals are otherwise found inside the
 * service's own words (`RACTE` in the prompt's "characters"), which is no leak.
 */
export function showsCore(text: string, read: string, core: string): boolean {
  if (core.length < 4 || !read.includes(core.toUpperCase())) return false;
  if (/\p{N}/u.test(core)) return true;
  const letters = [...core].map((letter) => letter.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const word = new RegExp(`(?<!${WORD_CHARACTER})${letters.join(BETWEEN_LETTERS)}(?!${WORD_CHARACTER})`, 'iu');
  return word.test(readingText(text));
}
