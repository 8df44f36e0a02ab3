import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import type { JumpableRandomGenerator } from 'pure-rand/types/JumpableRandomGenerator';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';

/**
 * The choices of one journey. Each journey draws from its own generator, seeded from the run's
 * seed and its index, so a run's journeys are the same whatever order their requests finish in.
 */
export class Random {
  private readonly generator: JumpableRandomGenerator;

  constructor(seed: number, stream: number) {
    // Mixed so that neighbouring journeys of neighbouring seeds do not share a stream.
    this.generator = xoroshiro128plus((seed ^ Math.imul(stream + 1, 0x9e3779b1)) | 0);
  }

  /** An integer in [from, to]. */
  int(from: number, to: number): number {
    return uniformInt(this.generator, from, to);
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return uniformFloat64(this.generator) < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)]!;
  }

  digits(count: number): string {
    let text = '';
    for (let i = 0; i < count; i += 1) text += String(this.int(0, 9));
    return text;
  }

  letters(count: number): string {
    let text = '';
    for (let i = 0; i < count; i += 1) text += String.fromCharCode(65 + this.int(0, 25));
    return text;
  }

  hex(count: number): string {
    let text = '';
    for (let i = 0; i < count; i += 1) text += this.int(0, 15).toString(16);
    return text;
  }
}
