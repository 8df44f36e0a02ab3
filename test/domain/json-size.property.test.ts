import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonObjectSize, jsonSize } from '../../src/domain/json-size.js';
import type { HintShape } from '../../src/privacy/hints.js';
import { hintShapeSize } from '../../src/domain/hint-bytes.js';

const stringified = (value: unknown): number => JSON.stringify(value)?.length ?? 0;

/** Strings JSON writes differently: quotes, backslashes, control characters, lone and paired surrogates. */
const awkwardString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({
    unit: fc.constantFrom(
      '"',
      '\\',
      '\n',
      '\b',
      '\u0001',
      '\u001f',
      '\ud800',
      '\udc00',
      '\ud83d\ude00',
      'a',
      'é',
      '\u2028',
    ),
    maxLength: 12,
  }),
);
const awkwardNumber = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.constantFrom(-0, 1e20, 1e21, 123456789012345680000, -1e-7, 5e-324, Number.MAX_VALUE, 2 ** 53 + 2),
);
/** What JSON.stringify leaves out of an object and writes as null in an array. */
const unwritable = fc.constantFrom(undefined, () => 1, Symbol('s'));

const { value: anyValue } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    awkwardString,
    awkwardNumber,
    fc.boolean(),
    fc.constant(null),
    unwritable,
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(awkwardString, tie('value'), { maxKeys: 5 }),
    fc.date({ noInvalidDate: true }),
  ),
}));

describe('jsonSize: the length of JSON.stringify, with no string built', () => {
  it('is exact for any value: escapes, surrogates, numbers of every form, left-out and null-written values, toJSON', () => {
    fc.assert(
      fc.property(anyValue, (value) => {
        expect(jsonSize(value)).toBe(stringified(value));
      }),
      { numRuns: 5000, seed: 2026 },
    );
  });

  it('an object summed entry by entry, with replaced entries taken off, is the object stringified', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(awkwardString, anyValue), { maxLength: 8 }), (entries) => {
        const object: Record<string, unknown> = {};
        const size = new JsonObjectSize();
        for (const [key, value] of entries) {
          if (Object.hasOwn(object, key)) size.remove(key, object[key]);
          Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
          size.add(key, value, jsonSize(value));
        }
        expect(size.total).toBe(stringified(object));
      }),
      { numRuns: 2000, seed: 2026 },
    );
  });

  it('a hint shape measured from its known fields is the shape stringified', () => {
    const shape = fc.record(
      {
        length: fc.nat({ max: 1_000_000 }),
        digits: fc.nat({ max: 1_000_000 }),
        letters: fc.nat({ max: 1_000_000 }),
        kind: fc.constantFrom('pan', 'aadhaar', 'email', 'phone', 'date', 'otp', 'dropped'),
        matches_pattern: fc.boolean(),
      },
      { requiredKeys: ['length', 'digits', 'letters'] },
    );
    fc.assert(
      fc.property(shape, (value) => {
        expect(hintShapeSize(value as HintShape)).toBe(stringified(value));
      }),
      { numRuns: 1000, seed: 2026 },
    );
  });
});
