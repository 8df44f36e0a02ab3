import { DETECTORS, OTP_DETECTOR } from './detectors.js';
import { MAX_SCAN_CHARS } from './limits.js';

const MIN_LENGTH = Math.min(...DETECTORS.map((detector) => detector.minLength));

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
