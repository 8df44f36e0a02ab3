import { describe, expect, it } from 'vitest';
import { sessionKeys } from '../../src/domain/session-key.js';
import { isIdentifier } from '../../src/privacy/identifier.js';

describe('the digest that keys an identity-looking session id', () => {
  const keys = sessionKeys('a fixed secret for this test');
  // Phone numbers as session ids: about one digest in twenty has ten decimal digits in a row.
  const ids = Array.from({ length: 400 }, (_, i) => `+9198${String(10_000_000 + i * 7919).padStart(8, '0')}`);

  it('always reads as an id itself, so a key sent back in a path or query names the same session', () => {
    for (const id of ids) {
      const key = keys.routingKey(id);
      expect(key).toMatch(/^h-[0-9a-f]{24}$/);
      expect(isIdentifier(key), key).toBe(true);
      expect(keys.routingKey(key)).toBe(key);
    }
  });

  it('is the same for the same id every time, and differs between ids', () => {
    const again = sessionKeys('a fixed secret for this test');
    expect(ids.map((id) => again.routingKey(id))).toEqual(ids.map((id) => keys.routingKey(id)));
    expect(new Set(ids.map((id) => keys.routingKey(id))).size).toBe(ids.length);
  });

  it('legacy "unknown" sessions keyed by a user id that must be digested read back the same way', () => {
    for (const id of ids.slice(0, 100)) {
      const first = keys.sessionKeyFor('unknown', `team/${id}`);
      expect(first.ok).toBe(true);
      const key = (first as { key: string }).key;
      expect(key).toMatch(/^unknown:h-[0-9a-f]{24}$/);
      expect(isIdentifier(key)).toBe(true);
      expect(keys.routingKey(key)).toBe(key);
    }
  });
});
