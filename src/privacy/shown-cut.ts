import { redactText } from './scrub.js';

/**
 * Client text shown cut short (an echoed id, a key in an error, a logged header): masked first,
 * then cut, with `mark` where it was cut. Cut first, `ABCDE1234` would be left of a PAN, which no
 * detector reads as one. Only four times `max` is scanned: past it nothing is shown anyway.
 */
export function shownCut(text: string, max: number, mark = '…'): string {
  const masked = redactText(text.slice(0, 4 * max));
  return masked.length > max ? `${masked.slice(0, max)}${mark}` : masked;
}
