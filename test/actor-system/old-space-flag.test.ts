import { describe, expect, it } from 'vitest';
import { heapLimitMbFor, oldSpaceLimitMb } from '../../src/actor-system/memory-budget.js';

describe("the old-space limit node was started with (start-up's check of npm start's flag)", () => {
  it('reads the last --max-old-space-size, in either spelling, and nothing else', () => {
    expect(oldSpaceLimitMb(['--no-allocation-site-pretenuring', `--max-old-space-size=${heapLimitMbFor(256)}`])).toBe(
      192,
    );
    expect(oldSpaceLimitMb(['--max_old_space_size=100', '--max-old-space-size=768'])).toBe(768);
    expect(oldSpaceLimitMb(['--max-semi-space-size=16', '--inspect'])).toBeUndefined();
  });
});
