import { describe, expect, it } from 'vitest';
import { patternSize } from '../../src/privacy/pattern-size.js';
import { describeShape, matchesPattern } from '../../src/privacy/hints.js';

describe('a pattern written out: its atoms once counted repetitions are copies', () => {
  it.each([
    ['^[A-Z]{5}[0-9]{4}[A-Z]{1}$', 10],
    ['^[6-9]\\d{9}$', 10],
    ['^[a-zA-Z ]{1,100}$', 100],
    ['^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}$', 7],
    ['((ab){3}){2}', 12],
    ['(?:\\w?){1000}', 1000],
    ['(?P<x>ab){3}(?i)c', 7],
    ['[]a{}]{3}', 3],
    ['\\p{L}{2,40}', 40],
    ['((\\w?){31}){31}', 961],
  ])('%s holds %i', (pattern, size) => {
    expect(patternSize(pattern)).toBe(size);
  });
});

describe('client patterns are matched only when small enough to compile and run cheaply', () => {
  it('a field validator matches as a form would', () => {
    expect(matchesPattern('ABCDE1234F', '^[A-Z]{5}[0-9]{4}[A-Z]{1}$')).toBe(true);
    expect(matchesPattern('ABCDE12345', '^[A-Z]{5}[0-9]{4}[A-Z]{1}$')).toBe(false);
    expect(matchesPattern('Meera Nair', '^[a-zA-Z ]{1,100}$')).toBe(true);
  });

  it('a pattern whose program would be huge is not compiled: no match is said', () => {
    // 37 copies of (?:\w?){1000}: 13 MB of program and 1.2 s a match when it was compiled.
    const huge = '(?:\\w?){1000}'.repeat(37) + 'x{7}';
    expect(matchesPattern('a'.repeat(1024), huge)).toBeUndefined();
    expect(describeShape('abc', huge)).not.toHaveProperty('matches_pattern');
    // One atom past the bound is refused too; at the bound, matched.
    expect(matchesPattern('a', 'a{301}')).toBeUndefined();
    expect(matchesPattern('a'.repeat(300), 'a{300}')).toBe(true);
  });
});
