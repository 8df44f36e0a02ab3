import { patternSyntaxOnly } from './identifier.js';
import { redactText, scrubText } from './scrub.js';

/**
 * Client-supplied strings (screen names, component ids, failure codes, choice hints) go into the
 * agent's system prompt as data. A client controls them, so each is flattened to one line,
 * capped, and quoted: "Ignore previous instructions" in a screen name reads as a quoted value,
 * never as a line of the prompt.
 */

// Control and invisible format characters (zero-width, bidi overrides), and line/paragraph separators.
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;
const WHITESPACE_RUN = /\s+/gu;
const ELLIPSIS = '…';

/**
 * One line, no control characters, at most `max` characters (code points). Scanned again once
 * flat: joining what control characters split must not put an identity value back together.
 */
export function flattenClientText(value: string, max: number): string {
  const flat = value.replace(UNSAFE, ' ').replace(WHITESPACE_RUN, ' ').trim();
  const chars = Array.from(flat);
  return redactText(chars.length <= max ? flat : chars.slice(0, Math.max(0, max - 1)).join('') + ELLIPSIS);
}

/** Flattened and JSON-quoted, so a quote inside the value is escaped and the value cannot end the quote. */
export function quoteClientText(value: string, max: number): string {
  return JSON.stringify(flattenClientText(value, max));
}

/**
 * A field validator's pattern, flattened and quoted: kept when its counts and ranges aside the rule
 * finds nothing in it (`[A-Z]{5}[0-9]{4}[A-Z]`), else masked like any client text.
 */
export function quoteClientPattern(value: string, max: number): string {
  const flat = value.replace(UNSAFE, ' ').replace(WHITESPACE_RUN, ' ').trim();
  const chars = Array.from(flat);
  const cut = chars.length <= max ? flat : chars.slice(0, Math.max(0, max - 1)).join('') + ELLIPSIS;
  return JSON.stringify(scrubText(patternSyntaxOnly(cut)).findings.length === 0 ? cut : redactText(cut));
}
