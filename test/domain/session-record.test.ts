import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redactForIngest } from '../../src/domain/event-redaction.js';
import { EventInSchema } from '../../src/domain/sdk-event.js';
import type { SessionRecord } from '../../src/domain/session-record.js';
import { MAX_COMPONENT_HINTS, applyEvent, newSessionRecord } from '../../src/domain/session-record.js';

const input = (componentId: string, at: number) =>
  redactForIngest(EventInSchema.parse({ session_id: 's1', event: 'component_input', screen: 'form', component_id: componentId, component_type: 'text_input', hint: `value ${at}` })).event;

describe('component hints', () => {
  it('keep one hint per component, most recently updated last, at most MAX_COMPONENT_HINTS', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 150 }), { maxLength: 400 }), (components) => {
        let record: SessionRecord = newSessionRecord('s1', 0);
        let expected: string[] = [];
        components.forEach((component, index) => {
          const id = `field-${component}`;
          record = applyEvent(record, input(id, index), { at: index + 1, schemaRegistry: true, maxBytes: 1 << 30 }).record;
          expected = [...expected.filter((held) => held !== id), id].slice(-MAX_COMPONENT_HINTS);
        });
        expect(record.component_hints.map((hint) => hint.component_id)).toEqual(expected);
        const last = record.component_hints.at(-1);
        if (last) expect(last.updated_at).toBe(components.length);
      }),
      { numRuns: 100 },
    );
  });

  it('measure what they hold as their JSON length', () => {
    const { record } = applyEvent(newSessionRecord('s1', 0), input('pan_field', 1), { at: 1, schemaRegistry: true, maxBytes: 1 << 30 });
    const [hint] = record.component_hints;
    const { bytes, ...held } = hint!;
    expect(bytes).toBe(JSON.stringify(held).length);
    expect(record.held_bytes).toBe(JSON.stringify(record.latest_event).length + bytes);
  });
});
