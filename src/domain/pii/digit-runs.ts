import { luhnValid, verhoeffValid } from './check-digits.js';
import type { PiiKind } from './kinds.js';

const digitsOf = (text: string) => text.replace(/\D/g, '');

/** Four groups of one to three digits, each at most 255, split by dots, perhaps with a port: an IPv4 address, not an identity value. */
const isIpv4 = (match: string) => /^\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?$/.test(match) && match.split(':')[0]!.split('.').every((part) => Number(part) <= 255);

/** A time of day, to the second and its fraction: `12:30:45.123456`. */
const isTimeOfDay = (match: string) => /^(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:[.,]\d{1,9})?)?$/.test(match);

/**
 * When something happened: a numeric date, or a year alone (an HTTP date's `2024 10:30:00`), then
 * a time of day (`2024-11-15 10:30:00`, `11/15/2024 10:30`). A log line's time, not a value.
 */
const isDateAndTime = (match: string) => {
  const parts = /^(.*?)[ T](\S+)$/.exec(match);
  return parts !== null && /^(?:\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}|(?:19|20)\d{2})$/.test(parts[1]!) && isTimeOfDay(parts[2]!);
};

/** An amount as India or the West writes it: `10,00,000`, `1,234,567`. */
const AMOUNT = /^\d{1,3}(?:,\d{2})*,\d{3}$|^\d{1,3}(?:,\d{3})+$/;

/**
 * A range of two amounts, each comma-grouped and below a crore (eight digits), the first the
 * smaller, joined by a spaced dash: `10,00,000 - 25,00,000`. Anything else with as many digits is
 * judged as any run is: `9,876,543,210` is a mobile number written as an amount, and
 * `98,765 43,210` two halves of one.
 */
const isAmountRange = (match: string) => {
  const parts = /^([\d,]+) - ([\d,]+)$/.exec(match);
  if (!parts) return false;
  const [low, high] = [parts[1]!, parts[2]!];
  return AMOUNT.test(low) && AMOUNT.test(high) && digitsOf(high).length < 9 && Number(digitsOf(low)) < Number(digitsOf(high));
};

/**
 * A run of digits however grouped (`9100 3712 3456 7890`, `234 567 890 124`, `98765-43210`,
 * `+91 98765 43210`), judged by its digits as a whole: a run is one value, so no part of it is
 * left readable because another part was taken for something else.
 */
export function classifyDigits(match: string): PiiKind | undefined {
  if (isIpv4(match) || isTimeOfDay(match) || isDateAndTime(match) || isAmountRange(match)) return undefined;
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
