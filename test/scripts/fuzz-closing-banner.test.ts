import { describe, expect, it } from 'vitest';
import { unframed } from '../../scripts/fuzz/closing-banner.js';

describe("the fuzz runner prints Schemathesis's closing line without its pytest frame", () => {
  it('unframes the closing banner, whatever it counts', () => {
    expect(unframed('============================= 1 warning in 106.36s =============================')).toBe(
      'Schemathesis closed: 1 warning in 106.36s',
    );
    expect(unframed('====== 2 errors, 1 warning in 4.92s (0:00:04) ======')).toBe(
      'Schemathesis closed: 2 errors, 1 warning in 4.92s (0:00:04)',
    );
  });

  it('leaves every other line as Schemathesis wrote it, section banners included', () => {
    for (const line of [
      '=================================== SUMMARY ====================================',
      '  1617 generated, 1617 passed, 42 skipped',
      '     ✅ 16 passed  ⏭  12 skipped',
      '',
    ]) {
      expect(unframed(line)).toBe(line);
    }
  });
});
