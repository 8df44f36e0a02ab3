import { mayHoldNumberWords, numberRuns } from './number-words.js';

/**
 * The text the rule (text-rule.ts) reads, when it differs from the text itself: numbers in words
 * read as digits, and the service's own ids (UUIDs: request ids, dispatch ids) blanked so no
 * detector reads a group of their hex digits as a phone or an account number. A detector's
 * masks are then written back onto the original text (docs/explanation/privacy.md).
 */

/** A stretch of the text that reads differently: `text[start, end)` is `reading[readStart, readEnd)`. */
interface Stretch {
  start: number;
  end: number;
  readStart: number;
  readEnd: number;
}

export interface Reading {
  text: string;
  stretches: Stretch[];
  /** Some words were read as a number. */
  readNumbers: boolean;
}

/** A UUID however cased, as a whole token: what `randomUUID` makes and the X-Request-ID header echoes. */
const UUID = /(?<![0-9A-Za-z])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![0-9A-Za-z])/gi;
const UUID_LENGTH = 36;
/** Letters no detector reads as part of a value, and that keep every boundary a letter keeps. */
const BLANK = 'x';
/** Two number words in a row, glued (`nineeight`, `ninetyeight`): read even with no separator in the text. */
const GLUED_WORDS =
  /(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|double|triple|hundred){2}/i;
const MAY_HOLD_WORDS = /[\p{L}][^\p{L}\p{M}\p{N}]+[\p{L}\p{N}]/u;

/**
 * The reading of `text`, or undefined when it reads as it is written. With `readNumbers` false
 * only the service's ids are blanked: the text's words are read as written (scrub.ts reads a
 * label's words so, since "Sunya" in `Name: Sunya Rara` is a name as well as a zero).
 */
export function readingOf(text: string, readNumbers = true): Reading | undefined {
  const ids: [number, number][] = [];
  if (text.length >= UUID_LENGTH && text.includes('-')) {
    UUID.lastIndex = 0;
    for (let match = UUID.exec(text); match !== null; match = UUID.exec(text))
      ids.push([match.index, match.index + UUID_LENGTH]);
  }
  const inId = (start: number, end: number) => ids.some(([from, to]) => start < to && end > from);
  const runs = !readNumbers
    ? []
    : (MAY_HOLD_WORDS.test(text) && mayHoldNumberWords(text)) || GLUED_WORDS.test(text)
      ? numberRuns(text, inId)
      : [];
  if (ids.length === 0 && runs.length === 0) return undefined;
  const pieces = [
    ...ids.map(([start, end]) => ({ start, end, read: BLANK.repeat(end - start) })),
    ...runs.map((run) => ({ start: run.start, end: run.end, read: run.digits })),
  ].sort((a, b) => a.start - b.start);
  const stretches: Stretch[] = [];
  let reading = '';
  let at = 0;
  for (const piece of pieces) {
    reading += text.slice(at, piece.start);
    stretches.push({
      start: piece.start,
      end: piece.end,
      readStart: reading.length,
      readEnd: reading.length + piece.read.length,
    });
    reading += piece.read;
    at = piece.end;
  }
  reading += text.slice(at);
  return { text: reading, stretches, readNumbers: runs.length > 0 };
}

/**
 * `masked` is the reading after the rule masked it (each mask keeps the length of what it
 * replaced). A stretch no mask touched is written as it was; one a mask touched is masked whole,
 * since a digit kept from "double five" cannot be told from the words around it.
 */
export function writeBack(
  original: string,
  reading: Reading,
  masked: string,
  maskWhole: (text: string) => string,
): string {
  let out = '';
  let at = 0;
  for (const stretch of reading.stretches) {
    out += masked.slice(at, stretch.readStart);
    const touched =
      masked.slice(stretch.readStart, stretch.readEnd) !== reading.text.slice(stretch.readStart, stretch.readEnd);
    const written = original.slice(stretch.start, stretch.end);
    out += touched ? maskWhole(written) : written;
    at = stretch.readEnd;
  }
  return out + masked.slice(at);
}
