import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isIdentifierField, isVersionField } from '../../src/privacy/keys.js';
import { MAX_SCAN_CHARS } from '../../src/privacy/limits.js';
import { maskWhole } from '../../src/privacy/mask.js';
import { isNumberWord } from '../../src/privacy/number-words.js';
import { createPiiRules } from '../../src/privacy/rules.js';
import { mayHoldIdentity } from '../../src/privacy/scrub.js';
import { ADDRESS_WORDS, NAME_LABELS, SPOKEN_AT } from '../../src/privacy/words.js';

/**
 * The rule's fast paths (git show d1df1cf:docs/benchmark-history.md, 2026-11-29) must give exactly what the forms
 * they replaced give, for any string: each is checked here against that form, written as it was,
 * on generated text weighted to the characters each fast path treats apart (ASCII letters and
 * digits, separators, apostrophes, marks, astral symbols, lone surrogates).
 */

const RUNS = 3000;

/** The mask as it was: every letter, mark, digit and \p{So} symbol starred, one star per UTF-16 unit. */
const referenceMask = (value: string): string =>
  value.replace(/[\p{L}\p{M}\p{N}\p{So}]/gu, (char) => (char.length === 1 ? '*' : '**'));

const CUE_WORDS = new Set(
  [...SPOKEN_AT, ...ADDRESS_WORDS, ...NAME_LABELS.map((label) => label.split(' ')[0]!)].filter((word) =>
    /^[a-z']+$/.test(word),
  ),
);

/** `mayHoldIdentity` as it was, words found by regex and the apostrophe forms tested on every text. */
function referenceMayHold(text: string): boolean {
  if (text.length > MAX_SCAN_CHARS) return true;
  if (text.length < 2) return false;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if ((code >= 48 && code <= 57) || code === 64 || code > 127) return true;
  }
  if (text.includes(':') || text.includes('=') || text.includes('/')) return true;
  let singles = 0;
  const word = /[A-Za-z]+/g;
  for (let match = word.exec(text); match !== null; match = word.exec(text)) {
    const lower = match[0].toLowerCase();
    if (CUE_WORDS.has(lower) || isNumberWord(lower)) return true;
    singles = lower.length === 1 ? singles + 1 : 0;
    if (singles >= 3) return true;
  }
  return /\b(?:i'm|name's|it's)\b/i.test(text);
}

const PIECES = [
  'a',
  'Z',
  'q',
  '7',
  '0',
  ' ',
  '-',
  '_',
  '.',
  "'",
  'I',
  'M',
  's',
  'at',
  'one',
  'Name',
  'nine',
  'street',
  'x',
  '*',
  '\u0301',
  'क',
  '़',
  '९',
  '🅐',
  '😀',
  '\ud800',
  '\udc00',
  '€',
  '\t',
];
const text = fc.oneof(
  fc.string({ unit: 'grapheme-ascii', maxLength: 40 }),
  fc.string({ unit: fc.constantFrom(...PIECES), maxLength: 24 }),
  fc.string({ unit: 'binary', maxLength: 24 }),
);

describe("the rule's fast paths give what the full forms give", () => {
  it('maskWhole: ASCII by char code, anything else by the regex', () => {
    fc.assert(
      fc.property(text, (value) => {
        expect(maskWhole(value)).toBe(referenceMask(value));
      }),
      { numRuns: RUNS, seed: 2911 },
    );
    for (const value of ['', 'ABCDE1234F', '--', 'a', '-a-', '98765 43210', 'x@y.in', 'मीरा 9', '🅐1', '\ud800a'])
      expect(maskWhole(value)).toBe(referenceMask(value));
  });

  it('mayHoldIdentity: words by char code, the apostrophe forms only where there is an apostrophe', () => {
    fc.assert(
      fc.property(text, (value) => {
        expect(mayHoldIdentity(value)).toBe(referenceMayHold(value));
      }),
      { numRuns: RUNS, seed: 2912 },
    );
    for (const value of [
      "I'm here",
      "my name's",
      'FILLED',
      'kycis-android',
      'a b c',
      'a b',
      'one',
      'onetwo three',
      'at home',
      'x:y',
    ])
      expect(mayHoldIdentity(value)).toBe(referenceMayHold(value));
  });

  it("a key's identifier-field fact is the test the pass made on every key", () => {
    const rules = createPiiRules();
    const keys = fc.oneof(
      fc.string({ maxLength: 80 }),
      fc.constantFrom(
        'id',
        'user_id',
        'userId',
        'version',
        'app_version',
        'sdkVersion',
        'screen',
        'error_code',
        'Id',
        'ID',
        'x_id_y',
      ),
    );
    fc.assert(
      fc.property(keys, (key) => {
        const reference =
          [
            'event',
            'traceparent',
            'screen',
            'screen_name',
            'component_type',
            'component_name',
            'failure_reason_code',
            'error_code',
            'reason_code',
            'errors',
            'mapping_version',
          ].includes(key) ||
          key === 'id' ||
          key.endsWith('_id') ||
          /[a-z]Id$/.test(key) ||
          isVersionField(key);
        expect(isIdentifierField(key)).toBe(reference);
        expect(rules.keyFacts(key).identifierField).toBe(reference);
      }),
      { numRuns: RUNS, seed: 2913 },
    );
  });
});
