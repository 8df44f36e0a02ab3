import { mayHoldNumberWords } from './number-words.js';
import { readingOf } from './reading.js';
import { compactOf } from './text-rule.js';

/**
 * What an identifier-like field (a session, user, request or message id, a screen or component
 * name, an error or reason code) may hold and still be shown as sent (docs/explanation/privacy.md, "What is
 * kept"): a UUID, a ULID, a hex id, or a token of `[A-Za-z0-9_.:/-]` with no run of six digits
 * across its separators (numbers in words read as digits), no four digits split by separators,
 * not four digits or more alone, no date and no document's shape.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A W3C traceparent: version, trace id, span id, flags, in hex. */
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/i;
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/i;
/** A hex id as digests and trace ids are written: 16 to 64 hex digits, some of them letters. */
const HEX_ID = /^(?:0x)?(?=[0-9a-f]*[a-f])[0-9a-f]{16,64}$/i;
/** Up to the 256 characters the schema lets a screen, component or code be. */
const HEX_PART = /(?<![0-9a-z])[0-9a-f]{16,64}(?![0-9a-z])/gi;
const ID_TOKEN = /^[A-Za-z0-9_.:/-]{1,256}$/;
/** Six digits or more with only separators between them: a phone, an account, an OTP, a date. */
const LONG_RUN = /\d(?:[_.:/-]{0,3}\d){5}/;
/** Groups of digits split by separators. */
const DIGIT_GROUPS = /\d+(?:[_.:/-]{1,3}\d+)+/g;
/**
 * Four digits or more in short groups (`8-8-1-2`, `482-913`): a value grouped as people say one,
 * not an id's counters (`r2-1005`, `r0-100`).
 */
const splitRun = (text: string): boolean =>
  [...text.matchAll(DIGIT_GROUPS)].some(([run]) => {
    const groups = run.split(/[_.:/-]+/);
    return (
      groups.join('').length >= 4 &&
      groups.every((group) => group.length <= 3) &&
      (groups.length >= 3 || groups.every((group) => group.length >= 2))
    );
  });
/** Four digits or more and nothing else (`2494`, `14-377`): an OTP or a PIN, not a name for anything. */
const bareNumber = (text: string): boolean => /^[\d_.:/-]+$/.test(text) && text.replace(/\D/g, '').length >= 4;
/** A date: day, month and year split by separators, or a month's name beside a number (`5-Jan-92`). */
const DATE =
  /(?<![A-Za-z0-9])\d{1,4}[_.:/-]\d{1,2}[_.:/-]\d{2,4}(?![A-Za-z0-9])|(?<![A-Za-z])(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*[_.:/-]?\d|\d[_.:/-]?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)(?![a-z])/i;
/** A PAN anywhere in the letters and digits run together (`ABCDE-1234-F`, `user_ABCDE1234F`), a vehicle's registration in one piece. */
const PAN_INSIDE = /[A-Z]{5}\d{4}[A-Z]/i;
const VEHICLE = /^[A-Z]{2}\d{1,2}[A-Z]{1,3}\d{4}$/i;
/** An IFSC (`SBIN0001234`, `OYWC0C52832`), whole or as one part of the id. */
const IFSC = /^[A-Z]{4}0[A-Z0-9]{6}$/i;

/** Answers remembered: the same screens, components, codes and ids arrive with every event. */
const seen = new Map<string, boolean>();
const REMEMBERED = 4096;
const MAX_REMEMBERED_LENGTH = 64;

export function isIdentifier(shown: string): boolean {
  if (shown.length > MAX_REMEMBERED_LENGTH) return identifierShape(shown);
  let answer = seen.get(shown);
  if (answer === undefined) {
    answer = identifierShape(shown);
    if (seen.size >= REMEMBERED) seen.clear();
    seen.set(shown, answer);
  }
  return answer;
}

const HAS_DIGIT = /\d/;

function identifierShape(shown: string): boolean {
  // An id cut short for a log line or an error ends with the cut's mark.
  const text = shown.endsWith('…') ? shown.slice(0, -1) : shown;
  if (UUID.test(text) || TRACEPARENT.test(text)) return true;
  if (!ID_TOKEN.test(text)) return false;
  if (ULID.test(text) || HEX_ID.test(text)) return !/\d{10}/.test(text);
  // No digit in figures or words: no run, no date, no document (every shape holds digits).
  if (!HAS_DIGIT.test(text) && !mayHoldNumberWords(text)) return true;
  // A hex id inside (the service's own `h-<24 hex>` digests, a trace id) has random digits: left out.
  const read = (readingOf(text)?.text ?? text).replace(HEX_PART, (part) =>
    /[a-f]/i.test(part) && !/\d{10}/.test(part) ? 'x' : part,
  );
  if (LONG_RUN.test(read) || splitRun(read) || DATE.test(read) || bareNumber(read)) return false;
  const compact = compactOf(read);
  if (PAN_INSIDE.test(compact) || VEHICLE.test(compact) || IFSC.test(compact)) return false;
  return !read.split(/[_.:/-]/).some((part) => VEHICLE.test(part) || IFSC.test(part));
}

/** A regular expression's counts (`{5}`, `{1,100}`) and ranges (`0-9`, `A-Z`): syntax, not a value's digits or letters. */
const PATTERN_SYNTAX = /\{\d+(?:,\d*)?\}|[A-Za-z0-9]-[A-Za-z0-9]|\\[pPu]\{?[A-Za-z0-9_]*\}?/g;

/**
 * A field validator's pattern (`expected_pattern`, a schema component's `pattern`): kept as sent
 * when, its counts and ranges aside, the rule finds nothing in it, since the session matches hints
 * against it and operators read it. A pattern spelling a value (`^ABCDE1234F$`) is masked like text.
 */
export const patternSyntaxOnly = (pattern: string): string => pattern.replace(PATTERN_SYNTAX, ' ');
