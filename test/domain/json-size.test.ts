import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonLength } from '../../src/domain/json-size.js';

const same = (value: unknown): void => {
  expect(jsonLength(value)).toBe(JSON.stringify(value)?.length ?? 0);
};

describe('jsonLength', () => {
  it('is the length of JSON.stringify for any JSON value, whatever its characters', () => {
    fc.assert(fc.property(fc.jsonValue({ stringUnit: 'binary' }), same), { numRuns: 2000 });
    fc.assert(fc.property(fc.jsonValue({ stringUnit: 'grapheme' }), same), { numRuns: 500 });
  });

  it('counts what JSON leaves out or rewrites as JSON.stringify does', () => {
    fc.assert(
      fc.property(fc.anything({ withBoxedValues: false, withMap: false, withSet: false, withTypedArray: false, withSparseArray: true, withNullPrototype: true, withObjectString: false, withBigInt: false, withDate: false }), same),
      { numRuns: 2000 },
    );
    for (const value of [-0, 1e21, -1.5e-7, Number.NaN, -Infinity, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 53 + 2, new Date(0), { at: new Date(0) }, [undefined, () => 1, Symbol('s')], { gone: undefined, kept: 1 }, '\ud800', '\udc00x', '\ud83d\ude00', '"\\\b\f\n\r\t\u0001\u001f']) same(value);
  });

  it('refuses a bigint as JSON.stringify does', () => {
    expect(() => jsonLength({ big: 1n })).toThrow(TypeError);
  });
});
