import { describe, expect, it } from 'vitest';
import { Random } from '../../../scripts/simulator/random.js';

const draws = (random: Random) => Array.from({ length: 20 }, () => random.int(0, 1_000_000));

describe('the simulator’s random choices', () => {
  it('are the same for the same seed and journey, and differ for another seed or another journey', () => {
    expect(draws(new Random(42, 3))).toEqual(draws(new Random(42, 3)));
    expect(draws(new Random(43, 3))).not.toEqual(draws(new Random(42, 3)));
    expect(draws(new Random(42, 4))).not.toEqual(draws(new Random(42, 3)));
  });

  it('stay within their bounds and reach both ends', () => {
    const random = new Random(1, 0);
    const values = Array.from({ length: 2000 }, () => random.int(2, 5));
    expect(new Set(values)).toEqual(new Set([2, 3, 4, 5]));
    expect(random.digits(12)).toMatch(/^\d{12}$/);
    expect(random.letters(5)).toMatch(/^[A-Z]{5}$/);
    expect(random.hex(32)).toMatch(/^[0-9a-f]{32}$/);
    const heads = Array.from({ length: 2000 }, () => random.chance(0.3)).filter(Boolean).length;
    expect(heads).toBeGreaterThan(450);
    expect(heads).toBeLessThan(750);
  });
});
