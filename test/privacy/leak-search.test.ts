import { describe, expect, it } from 'vitest';
import { leaks } from '../support/identity-values.js';

/** The search the privacy tests run on every surface (test/support/identity-values.ts, `leaks`). */
describe('the leak search', () => {
  const phone = { kind: 'phone', raw: '99225426\u280025', secret: '992254' };

  it('finds the part no mask keeps where a value starts, whatever follows it', () => {
    expect(leaks('{"hint":"992254•••••"}', phone)).toBe(true);
    expect(leaks('my number is 99225426 25', phone)).toBe(true);
    expect(leaks('"99225426\u280025"', phone)).toBe(true);
  });

  it('does not take the same digits inside a longer number (a log line time) for a leak', () => {
    expect(leaks('{"level":30,"time":1795989922540,"msg":"request"}', phone)).toBe(false);
    expect(leaks('kyc_request_seconds_sum 0.1992254', phone)).toBe(false);
  });
});
