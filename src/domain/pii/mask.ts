import type { PiiKind } from './kinds.js';

/** One star per UTF-16 unit: a mask keeps the length of what it replaced, so masks can be written back onto the text they came from. */
const stars = (char: string) => (char.length === 1 ? '*' : '**');
/**
 * A letter (with its combining marks, so a Devanagari word leaves no vowel signs behind), a digit,
 * or a symbol that draws one (`🅐`, `🇦`: other symbols, \p{So}).
 */
const MASKABLE = /[\p{L}\p{M}\p{N}\p{So}]/gu;
const LETTER_OR_DIGIT = /[\p{L}\p{M}\p{N}\p{So}]/u;

/** Every letter and digit starred, separators kept: what a date or an OTP is masked to. */
export const maskWhole = (value: string) => value.replace(MASKABLE, stars);

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

/** Kinds masked whole wherever they are: any part of a date, a name or an address says too much. */
export const MASKED_WHOLE: ReadonlySet<PiiKind> = new Set(['date', 'otp', 'text', 'name', 'address']);
