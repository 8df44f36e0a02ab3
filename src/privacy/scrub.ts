import type { Finding, PiiKind, ValueShape } from './kinds.js';
import { shapeOf } from './kinds.js';
import { MAX_SCAN_CHARS } from './limits.js';
import { maskWhole } from './mask.js';
import { isNumberWord } from './number-words.js';
import { readerView } from './plain-text.js';
import { readingOf, writeBack } from './reading.js';
import { applyRule } from './text-rule.js';
import {
  ADDRESS_WORDS,
  HOON_WORDS,
  NAME_LABELS,
  SPEAKING_WORDS,
  SPELLING_WORDS,
  SPOKEN_AT,
  VALUE_LABELS,
} from './words.js';

export interface ScrubResult {
  text: string;
  findings: Finding[];
  /** The whole string (trimmed) was one masked value. */
  whole: PiiKind | undefined;
}

const clean = (text: string): ScrubResult => ({ text, findings: [], whole: undefined });

/**
 * Words that bring the rule into ASCII text with no digit and no `@`: "at" of a handle, a name's
 * label, a place word, a value's label, the spelling alphabet, "hoon" and "bol", numbers in words.
 */
const CUE_WORDS = new Set(
  [
    ...SPOKEN_AT,
    ...ADDRESS_WORDS,
    ...VALUE_LABELS,
    ...SPELLING_WORDS,
    ...HOON_WORDS,
    ...SPEAKING_WORDS,
    ...NAME_LABELS.map((label) => label.split(' ')[0]!),
  ].filter((word) => /^[a-z']+$/.test(word)),
);

/** ASCII text with no digit and no `@`, word by word: a cue word, a number word, three letters spelled one at a time or a letter told "for" a word, a colon or `c/o`. */
function asciiCues(text: string): boolean {
  if (text.includes(':') || text.includes('=') || text.includes('/')) return true;
  let singles = 0;
  let single = false;
  let start = -1;
  // The runs of ASCII letters ([A-Za-z]+) found by char code, with no match array per word: this
  // runs on most strings of every event (git show d1df1cf:docs/benchmark-history.md, 2026-11-29). A code with bit
  // 5 set is 97 to 122 exactly for A-Z and a-z.
  for (let i = 0; i <= text.length; i += 1) {
    const folded = i < text.length ? text.charCodeAt(i) | 32 : 0;
    if (folded >= 97 && folded <= 122) {
      if (start < 0) start = i;
      continue;
    }
    if (start < 0) continue;
    const word = text.slice(start, i).toLowerCase();
    start = -1;
    if (CUE_WORDS.has(word) || isNumberWord(word) || (single && word === 'for')) return true;
    single = word.length === 1;
    singles = single ? singles + 1 : 0;
    if (singles >= 3) return true;
  }
  // "I'm", "name's": the apostrophe splits the word. Each form holds one: with none, no test.
  return text.includes("'") && /\b(?:i'm|name's|it's)\b/i.test(text);
}

/**
 * Whether `text` could hold anything the rule masks: a digit, an `@`, another script (its digits,
 * its month names), or one of the words above. One pass over the characters for most strings.
 */
export function mayHoldIdentity(text: string): boolean {
  if (text.length > MAX_SCAN_CHARS) return true;
  if (text.length < 2) return false;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if ((code >= 48 && code <= 57) || code === 64 || code > 127) return true;
  }
  return asciiCues(text);
}

/**
 * The default-deny rule over one client text (docs/explanation/privacy.md, "The rule"): read as a person
 * reads it, then masked where it shows a value's shape; the rest stays readable. Strings over the
 * budget are not read but dropped with a marker.
 */
export function scrubText(input: string): ScrubResult {
  if (input.length > MAX_SCAN_CHARS) {
    return {
      text: `[dropped: ${input.length} chars]`,
      findings: [{ kind: 'dropped', shape: { length: input.length, digits: 0, letters: 0, kind: 'dropped' } }],
      whole: 'dropped',
    };
  }
  if (!mayHoldIdentity(input)) return clean(input);
  const view = readerView(input);
  const reading = readingOf(view);
  const result = applyRule(reading?.text ?? view);
  const read = {
    text: reading ? writeBack(view, reading, result.text, maskWhole) : result.text,
    findings: result.findings,
    whole: result.whole,
  };
  const merged = reading?.readNumbers ? withWordsAsWritten(view, read) : read;
  if (merged.findings.length === 0) return clean(input);
  return merged;
}

/** What names and places say: a second pass finds these among words that also read as numbers. */
const WORD_KINDS: ReadonlySet<PiiKind> = new Set(['name', 'address']);

/**
 * A text holding numbers in words is read a second time with its words as written, and a name or
 * place found so is masked too: "Sunya" in `Name: Sunya Rara` is read as a zero by the first
 * pass, which then finds no name after the label (docs/explanation/privacy.md, "Numbers in words").
 */
function withWordsAsWritten(view: string, read: ScrubResult): ScrubResult {
  const ids = readingOf(view, false);
  const plain = applyRule(ids?.text ?? view);
  const words = plain.findings.filter((finding) => WORD_KINDS.has(finding.kind));
  if (words.length === 0) return read;
  const plainText = ids ? writeBack(view, ids, plain.text, maskWhole) : plain.text;
  // Both passes keep the view's length (a mask keeps the length of what it replaced): a character either masked stays masked.
  let text = '';
  for (let i = 0; i < view.length; i += 1) text += plainText[i] !== view[i] ? plainText[i] : read.text[i];
  return { text, findings: [...read.findings, ...words], whole: read.whole ?? plain.whole };
}

/** For any client text the service keeps, shows or logs (a screen name, a trigger signal, a header). */
export const redactText = (value: string): string => scrubText(value).text;

/** A mask may keep the last four of these, and of nothing else (docs/explanation/privacy.md, "What a mask keeps"). */
export const KEEPS_LAST_FOUR: ReadonlySet<PiiKind> = new Set(['phone', 'aadhaar']);

/**
 * A value under a key (or in a component) whose name says it holds an identity value: masked
 * whole whatever it looks like, with its shape. A mobile number or an Aadhaar alone keeps its
 * last four; anything else (a name, an address, a code, a date) shows nothing.
 */
export function maskKeyed(value: string): { text: string; shape: ValueShape } {
  if (value.length > MAX_SCAN_CHARS)
    return {
      text: `[dropped: ${value.length} chars]`,
      shape: { length: value.length, digits: 0, letters: 0, kind: 'dropped' },
    };
  const scan = scrubText(value);
  const kind = scan.whole ?? 'text';
  const text = KEEPS_LAST_FOUR.has(kind) ? scan.text : maskWhole(value);
  return { text, shape: shapeOf(value, kind) };
}
