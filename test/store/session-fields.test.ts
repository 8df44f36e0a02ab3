import { describe, expect, it } from 'vitest';
import { joinContext, splitContext } from '../../src/store/session-fields.js';

/** A context value without a prototype, as the session's retry counts are made (src/domain/session-event.ts). */
function withoutPrototype(entries: [string, number][]): Record<string, number> {
  const counts = Object.create(null) as Record<string, number>;
  for (const [key, value] of entries) counts[key] = value;
  return counts;
}

describe('a state written apart from its fields', () => {
  it('writes a value without a prototype as the JSON of its own keys, in order, and reads it back with every key', () => {
    const counts = withoutPrototype([
      ['pan_field', 2],
      ['__proto__', 1],
      ['constructor', 3],
    ]);
    const context = {
      session_id: 's1',
      retry_counts: counts,
      nothing: Object.freeze(Object.create(null) as object),
      flow: null,
    };
    const { state } = splitContext({ voice: 'inactive' }, context);
    expect(state).toBe(
      '{"value":{"voice":"inactive"},"context":{"session_id":"s1","retry_counts":{"pan_field":2,"__proto__":1,"constructor":3},"nothing":{},"flow":null},"fields":{}}',
    );
    // The context it was given is not changed: the session's state is immutable.
    expect(context.retry_counts).toBe(counts);
    const back = joinContext(state, () => undefined).context.retry_counts as Record<string, number>;
    expect(Object.keys(back)).toEqual(['pan_field', '__proto__', 'constructor']);
    expect(back.__proto__).toBe(1);
  });
});
