/**
 * Text as a reader sees it, which is what the identity detectors must see too: a value written
 * in another script's digits, split by invisible characters or grouped with an unusual dash or
 * space is still the value (docs/privacy.md, "What a value is read as").
 */

const NON_ASCII = /[^\x00-\x7f]/;
const DECIMAL_DIGIT = /\p{Nd}/u;
const ANY_DECIMAL_DIGIT = /\p{Nd}/gu;
/** Every dash (hyphen, en and em dash, the minus sign) and every space (no-break, thin, ideographic). */
const DASH = /[\p{Pd}\u2212\u2796\uFE63\uFF0D]/gu;
const SPACE = /\p{Zs}/gu;

/**
 * Unicode encodes each script's decimal digits as a run of ten, zero first, and lists them all
 * under \p{Nd}; some runs touch (mathematical digits come in five runs of ten). So a digit's value
 * is how far it stands from the start of its run, modulo ten: no table of scripts to keep up.
 */
const digitValues = new Map<number, string>();
const MAX_RUN = 60;

function digitValue(codePoint: number): string {
  let value = digitValues.get(codePoint);
  if (value === undefined) {
    let start = codePoint;
    while (codePoint - start < MAX_RUN && DECIMAL_DIGIT.test(String.fromCodePoint(start - 1))) start -= 1;
    value = String((codePoint - start) % 10);
    // At most the 700-odd decimal digits Unicode has: bounded without a cap.
    digitValues.set(codePoint, value);
  }
  return value;
}

/**
 * Digits of every script as ASCII digits, every dash as `-` and every space as ` `, after NFKC
 * (which folds fullwidth forms). Each replacement is one UTF-16 unit for one, except astral
 * digits (two units for one): callers use the result as the text they scan and return.
 */
export function asciiForms(text: string): string {
  if (!NON_ASCII.test(text)) return text;
  return text
    .normalize('NFKC')
    .replace(ANY_DECIMAL_DIGIT, (digit) => (digit.length === 1 && digit.charCodeAt(0) < 128 ? digit : digitValue(digit.codePointAt(0)!)))
    .replace(DASH, '-')
    .replace(SPACE, ' ');
}

/** Format characters (zero-width space, soft hyphen, bidi marks), control characters, a whitespace run. */
const HIDING = /[\p{Cf}\p{Cc}]|\s\s/u;

/**
 * Invisible format characters dropped, control characters and runs of whitespace read as one
 * space. A value split by them (`ABCDE\u200b1234F`, `98765\n43210`) is still the value, and the
 * system prompt's flattening would put it back together.
 */
export function plainSpacing(text: string): string {
  if (!HIDING.test(text)) return text;
  return text.replace(/\p{Cf}/gu, '').replace(/[\s\p{Cc}]+/gu, ' ');
}

/**
 * Both of the above: the one text every detector reads. Invisible characters go first, since one
 * inside a surrogate pair hides the digit it splits; spacing again after, since NFKC turns wide
 * spaces into ordinary ones.
 */
export const readerView = (text: string): string => plainSpacing(asciiForms(plainSpacing(text)));
