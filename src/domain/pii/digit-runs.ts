import { luhnValid, verhoeffValid } from './check-digits.js';
import type { PiiKind } from './kinds.js';

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
