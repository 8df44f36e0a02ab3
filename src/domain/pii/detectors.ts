import { classifyDigits } from './digit-runs.js';
import type { PiiKind } from './kinds.js';
import { ADDRESS_WORDS, B, DATE_SEP, DAY, DAY2, E, GROUP, MAIL_PART, MAIL_TLD, MONTH, MONTH2, MONTHS, NAME_WORD, NAMED_SEP, normalized, SHORT_DATE_SEP, SPELLED, SPOKEN_AT, SPOKEN_DOT, STATES, WB, WE, YEAR, YEAR2 } from './patterns.js';

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

/** What an OTP is called: "otp", a one-time password or code, a verification or security code, a passcode. */
const OTP_WORDS = 'otp|o\\.t\\.p\\.?|(?:one|1)[- ]time (?:password|passcode|code|pin)|verification code|security code|passcode|ओटीपी';

/**
 * In order: each detector sees the text the ones before it left, and a masked value has too few
 * letters and digits left to match a later one.
 */
export const DETECTORS: readonly Detector[] = [
  /**
   * An e-mail address, a space either side of its `@` included (`meera@ gmail.com`). It starts
   * where a local part can (nothing of one before it): tried from inside every run of such
   * characters, a crafted 4 KB text cost 26 ms a string to scan, 400 ms an event.
   */
  { kind: 'email', minDigits: 0, minLength: 6, pattern: new RegExp(`(?<![\\p{L}\\p{M}\\p{N}._%+-])[\\p{L}\\p{M}\\p{N}._%+-]{1,64} ?@ ?[\\p{L}\\p{M}\\p{N}-]{1,63}(?:\\.[\\p{L}\\p{M}\\p{N}-]{1,63}){0,6}\\.\\p{L}{2,24}(?![\\p{L}\\p{M}\\p{N}])`, 'gu') },
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
    // `June 5 95`: three digits.
    minDigits: 3,
    minLength: 6,
    maskWhole: true,
    pattern: new RegExp(
      normalized(
        // Numeric (year first, day first, month first, a two-digit year, run together either way), then with the month named:
        // `15th June 1987`, `15th of June '95`, `15/Jun/1995`, `Jun. 15, 1995`, `June the 15th, 1995`, `Jun-15-1995`, `1995 June 15`, `15 जून 1995`.
        `${B}(?:${YEAR}${DATE_SEP}${MONTH}${DATE_SEP}${DAY}|${DAY}${DATE_SEP}${MONTH}${DATE_SEP}${YEAR}|${MONTH}${DATE_SEP}${DAY}${DATE_SEP}${YEAR}|` +
          `${DAY2}${SHORT_DATE_SEP}${MONTH2}${SHORT_DATE_SEP}${YEAR2}|${MONTH}/${DAY}/${YEAR2}|${DAY2}${MONTH2}${YEAR}|${YEAR}${MONTH2}${DAY2}|` +
          `${DAY}(?:st|nd|rd|th)?(?: of)?${NAMED_SEP}(?:${MONTHS})\\.?${NAMED_SEP}(?:${YEAR}|${YEAR2})|(?:${MONTHS})\\.?${NAMED_SEP}(?:the )?${DAY}(?:st|nd|rd|th)?${NAMED_SEP}(?:${YEAR}|${YEAR2})|` +
          `${YEAR}${NAMED_SEP}(?:${MONTHS})\\.?${NAMED_SEP}${DAY})${E}` +
          // A date with a time of day after it is when something happened (a log line, an HTTP date), not a birthday.
          `(?! ?(?:[01]?\\d|2[0-3]):[0-5]\\d)`,
      ),
      'giu',
    ),
  },
  /** A GSTIN: state code, the holder's PAN, entity number, `Z`, check character. */
  { kind: 'gstin', minDigits: 6, minLength: 15, pattern: new RegExp(`${B}\\d{2} ?[A-Z]{5} ?\\d{4} ?[A-Z] ?[0-9A-Z] ?Z ?[0-9A-Z]${E}`, 'gi') },
  /** A driving licence: state, RTO, year of issue, serial; `MH-12-2011-0012345`, `MH1220110012345`. */
  { kind: 'driving_licence', minDigits: 13, minLength: 15, pattern: new RegExp(`${B}(?:${STATES})${GROUP}?\\d{2}${GROUP}?(?:19|20)\\d{2}${GROUP}?\\d{7}${E}`, 'giu') },
  /** A vehicle registration: `MH 12 AB 1234`, `MH-12-AB-1234`, and the BH series `22 BH 1234 AA`. Spaced, only in capitals, which ordinary words are not. */
  { kind: 'vehicle', minDigits: 5, minLength: 8, pattern: new RegExp(`${B}(?:(?:${STATES})(?: ?- ?| )?\\d{1,2}(?: ?- ?| )?[A-Z]{1,3}(?: ?- ?| )?\\d{4}|\\d{2} ?BH ?\\d{4} ?[A-Z]{1,2})${E}`, 'g') },
  { kind: 'vehicle', minDigits: 5, minLength: 8, pattern: new RegExp(`${B}(?:${STATES})\\d{1,2}[A-Z]{1,3}\\d{4}${E}`, 'gi') },
  /** A mobile number written `(987) 654-3210`; every other grouping is a run of digits below. */
  { kind: 'phone', minDigits: 10, minLength: 12, pattern: new RegExp(`(?<![A-Za-z0-9+])(?:\\+91${GROUP}?|0091${GROUP}?|0)?\\([6-9]\\d{2}\\) ?\\d{3}${GROUP}?\\d{4}${E}`, 'gu') },
  /** Aadhaar, VID, phone, card and account numbers, and any other run of digits long enough to be an identifier. */
  // Not begun right after `digit:`: the minutes and seconds of `T10:30:00.123+05:30` are a time, not a run.
  { kind: 'number', minDigits: 9, minLength: 9, pattern: new RegExp(`(?<![A-Za-z0-9]|\\d:)\\+?\\d(?:${GROUP}?\\d){8,40}${E}`, 'gu'), classify: classifyDigits },
  /** `ABCDE1234F`, its groups split (`ABCDE 1234 F`, `ABCDE;1234;F`), its digits too (`ABCDE 12 34 F`). */
  { kind: 'pan', minDigits: 4, minLength: 10, pattern: new RegExp(`${B}[A-Z]{5}${GROUP}?\\d(?:${GROUP}?\\d){3}${GROUP}?[A-Z]${E}`, 'giu') },
  /** A PAN spelled out, a character at a time: `A B C D E 1 2 3 4 F`, `a-b-c-d-e-1-2-3-4-f` (digits said in words read as digits). */
  { kind: 'pan', minDigits: 4, minLength: 10, pattern: new RegExp(`${B}[A-Z](?:${SPELLED}[A-Z]){4}${SPELLED}\\d(?:${SPELLED}?\\d){3}${SPELLED}[A-Z]${E}`, 'giu') },
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
  /**
   * An OTP told, in any text: "my otp is 482913", "the verification code: 4829", "ओटीपी 482 913".
   * A code of 4–8 digits within a few words after the word for it; a postal PIN code is not one.
   */
  {
    kind: 'otp',
    minDigits: 4,
    minLength: 7,
    maskWhole: true,
    cue: new RegExp(normalized(OTP_WORDS), 'iu'),
    pattern: new RegExp(normalized(`(?<=${WB}(?:${OTP_WORDS})${WE}[^\\p{N}.;!?]{0,24})(?<!\\p{N})\\d(?: ?\\d){3,7}(?!\\p{N})`), 'giu'),
  },
];

/** In a field about an OTP (its key, component id or type says so), any short code is one. */
export const OTP_DETECTOR: Detector = { kind: 'otp', minDigits: 4, minLength: 4, pattern: new RegExp(`${B}\\d{4,8}${E}`, 'g') };
