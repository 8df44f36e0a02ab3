import { describe, expect, it } from 'vitest';
import { redactForIngest } from '../../src/domain/event-redaction.js';
import { HELD_BYTES_FACTOR, heldDensity } from '../../src/domain/held-density.js';
import { EventInSchema } from '../../src/domain/sdk-event.js';
import { applyEvent } from '../../src/domain/session-event.js';
import { newSessionRecord } from '../../src/domain/session-record.js';
import { STAGES, harnessEnvelope, schemaFor } from '../fixtures/field-sdk-sequences.js';

const sizesOf = (body: Record<string, unknown>) =>
  redactForIngest(EventInSchema.parse({ session_id: 's1', ...body })).sizes;

describe('what an event costs the heap per byte of its JSON (the memory budget)', () => {
  it("counts a deployed SDK's events at or near the usual factor", () => {
    const schema = {
      ...harnessEnvelope('s1', 'u1'),
      event: 'screen_schema',
      screen: STAGES[0],
      properties: schemaFor(STAGES[0], 0),
    };
    expect(heldDensity(sizesOf(schema))).toBeLessThan(3);
    expect(
      heldDensity(
        sizesOf({
          event: 'component_input',
          component_id: 'pan_field',
          hint: 'ABCDE1234F',
          properties: { field_status: 'FILLED' },
        }),
      ),
    ).toBe(HELD_BYTES_FACTOR);
  });

  it('counts empty containers and wide objects at what V8 spends on them, not at their few bytes of text', () => {
    expect(
      heldDensity(sizesOf({ event: 'x', properties: { a: Array.from({ length: 15_000 }, () => []) } })),
    ).toBeGreaterThanOrEqual(13);
    expect(
      heldDensity(sizesOf({ event: 'x', properties: { a: Array.from({ length: 15_000 }, () => ({})) } })),
    ).toBeGreaterThanOrEqual(21);
    expect(
      heldDensity(
        sizesOf({ event: 'x', properties: Object.fromEntries(Array.from({ length: 4_400 }, (_, i) => [`k${i}`, 1])) }),
      ),
    ).toBeGreaterThanOrEqual(5.9);
    // Strings and boxed numbers: a slot, a header or a box each.
    expect(
      heldDensity(
        sizesOf({
          event: 'x',
          properties: { a: Array.from({ length: 12_000 }, (_, i) => `${(i * 7919) % 97}`.padStart(5, 'x')) },
        }),
      ),
    ).toBeGreaterThanOrEqual(3.9);
    expect(
      heldDensity(
        sizesOf({ event: 'x', properties: { a: Array.from({ length: 12_000 }, (_, i) => (i % 2 ? 0.5 : '')) } }),
      ),
    ).toBeGreaterThanOrEqual(4.6);
    // An object each with a key of its own: each key a shape of its own.
    expect(
      heldDensity(
        sizesOf({ event: 'x', properties: { a: Array.from({ length: 3_000 }, (_, i) => ({ [`q${i}`]: 1 })) } }),
      ),
    ).toBeGreaterThanOrEqual(14);
  });

  it('keeps the highest density a session took: what a nested event left in its hints stays after a flat one', () => {
    const nested = redactForIngest(
      EventInSchema.parse({
        session_id: 's1',
        event: 'component_input',
        component_id: 'f',
        hint: 'x',
        properties: { a: Array.from({ length: 200 }, () => []) },
      }),
    );
    const flat = redactForIngest(EventInSchema.parse({ session_id: 's1', event: 'screen_view', screen: 'b' }));
    let record = newSessionRecord('s1', 0);
    expect(record.held_density).toBeUndefined();
    record = applyEvent(record, nested.event, {
      at: 1,
      schemaRegistry: true,
      maxBytes: 1 << 20,
      matchHint: nested.matchHint,
      sizes: nested.sizes,
    }).record;
    const density = record.held_density;
    expect(density).toBeGreaterThan(10);
    record = applyEvent(record, flat.event, {
      at: 2,
      schemaRegistry: true,
      maxBytes: 1 << 20,
      matchHint: flat.matchHint,
      sizes: flat.sizes,
    }).record;
    expect(record.held_density).toBe(density);
  });
});
