import { describe, expect, it } from 'vitest';
import { newTraceId, traceIdFromTraceparent } from '../../src/domain/trace.js';

describe('newTraceId', () => {
  it('gives 16 random bytes as lowercase hex, never the same twice, across refills of its pool', () => {
    const ids = Array.from({ length: 1_000 }, newTraceId);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // Every id is a valid traceparent trace id (not all zeros).
    expect(ids.every((id) => traceIdFromTraceparent(`00-${id}-00f067aa0ba902b7-01`) === id)).toBe(true);
  });
});
