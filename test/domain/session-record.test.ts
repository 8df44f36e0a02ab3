import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redactForIngest } from '../../src/domain/event-redaction.js';
import { EventInSchema } from '../../src/domain/sdk-event.js';
import type { SessionRecord } from '../../src/domain/session-record.js';
import { MAX_COMPONENT_HINTS } from '../../src/domain/component-hints.js';
import { applyEvent } from '../../src/domain/session-event.js';
import { newSessionRecord } from '../../src/domain/session-record.js';

const input = (componentId: string, at: number) =>
  redactForIngest(
    EventInSchema.parse({
      session_id: 's1',
      event: 'component_input',
      screen: 'form',
      component_id: componentId,
      component_type: 'text_input',
      hint: `value ${at}`,
    }),
  ).event;

describe('component hints', () => {
  it('keep one hint per component, most recently updated last, at most MAX_COMPONENT_HINTS', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 150 }), { maxLength: 400 }), (components) => {
        let record: SessionRecord = newSessionRecord('s1', 0);
        let expected: string[] = [];
        components.forEach((component, index) => {
          const id = `field-${component}`;
          record = applyEvent(record, input(id, index), {
            at: index + 1,
            schemaRegistry: true,
            maxBytes: 1 << 30,
          }).record;
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
    const { record } = applyEvent(newSessionRecord('s1', 0), input('pan_field', 1), {
      at: 1,
      schemaRegistry: true,
      maxBytes: 1 << 30,
    });
    const [hint] = record.component_hints;
    const { bytes, ...held } = hint!;
    expect(bytes).toBe(JSON.stringify(held).length);
    expect(record.held_bytes).toBe(JSON.stringify(record.latest_event).length + bytes);
  });
});

const schemaOn = (screen: string, pattern: string, note = '') =>
  redactForIngest(
    EventInSchema.parse({
      session_id: 's1',
      event: 'screen_schema',
      screen,
      properties: {
        screen_id: screen,
        display_name: `${screen}${note}`,
        components: [{ id: 'id_field', type: 'text_input', validations: [{ rule_id: `${screen}_v1`, pattern }] }],
      },
    }),
  );

describe('what a session holds, summed', () => {
  it('is the JSON length of the latest event, every hint and every schema, whatever was replaced or dropped', () => {
    const step = fc.oneof(
      fc.record({ kind: fc.constant('input' as const), component: fc.integer({ min: 0, max: 150 }) }),
      fc.record({
        kind: fc.constant('schema' as const),
        screen: fc.integer({ min: 0, max: 40 }),
        note: fc.string({ maxLength: 3 }),
      }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 300 }), (steps) => {
        let record: SessionRecord = newSessionRecord('s1', 0);
        steps.forEach((next, index) => {
          const event =
            next.kind === 'input'
              ? input(`field-${next.component}`, index)
              : schemaOn(`screen_${next.screen}`, '[0-9]+', next.note).event;
          record = applyEvent(record, event, { at: index + 1, schemaRegistry: true, maxBytes: 1 << 30 }).record;
        });
        const hints = record.component_hints.reduce((total, hint) => total + hint.bytes, 0);
        const schemas = Object.values(record.schemas).reduce((total, schema) => total + schema.bytes, 0);
        const latest = record.latest_event ? JSON.stringify(record.latest_event).length : 0;
        expect(record.held_bytes).toBe(latest + hints + schemas);
      }),
      // Past the bound on hints as well as within it.
      {
        numRuns: 100,
        examples: [[Array.from({ length: 130 }, (_, component) => ({ kind: 'input' as const, component }))]],
      },
    );
  });
});

describe('a hint matched against the schemas', () => {
  const typed = () =>
    redactForIngest(
      EventInSchema.parse({
        session_id: 's1',
        event: 'component_input',
        screen: 'review',
        component_id: 'id_field',
        component_type: 'text_input',
        hint: 'ABCDE1234F',
        masked: false,
      }),
    );
  const apply = (record: SessionRecord, { event, matchHint }: ReturnType<typeof typed>, at: number) =>
    applyEvent(record, event, { at, schemaRegistry: true, maxBytes: 1 << 30, matchHint });
  const matched = (record: SessionRecord) =>
    (apply(record, typed(), 100).stored.shape as { matches_pattern?: boolean } | undefined)?.matches_pattern;

  it('off its screen takes the pattern of the first schema that has the component, as the schemas stand now', () => {
    let record = newSessionRecord('s1', 0);
    record = apply(record, schemaOn('first', '[A-Z]{5}[0-9]{4}[A-Z]'), 1).record;
    record = apply(record, schemaOn('second', '[0-9]{12}'), 2).record;
    expect(matched(record)).toBe(true);
    // The same schema again changes nothing; a new version of it goes last.
    record = apply(record, schemaOn('first', '[A-Z]{5}[0-9]{4}[A-Z]'), 3).record;
    expect(matched(record)).toBe(true);
    record = apply(record, schemaOn('first', '[A-Z]{5}[0-9]{4}[A-Z]', ' v2'), 4).record;
    expect(Object.keys(record.schemas)).toEqual(['second', 'first']);
    expect(matched(record)).toBe(false);
  });

  it("on its screen takes that screen's pattern before the first schema's", () => {
    let record = newSessionRecord('s1', 0);
    record = apply(record, schemaOn('first', '[A-Z]{5}[0-9]{4}[A-Z]'), 1).record;
    expect(matched(record)).toBe(true);
    record = apply(record, schemaOn('review', '[0-9]{12}'), 2).record;
    expect(matched(record)).toBe(false);
  });

  it('is not matched when no schema names a pattern for the component', () => {
    let record = newSessionRecord('s1', 0);
    expect(matched(record)).toBeUndefined();
    record = apply(
      record,
      redactForIngest(
        EventInSchema.parse({
          session_id: 's1',
          event: 'screen_schema',
          screen: 'review',
          properties: {
            screen_id: 'review',
            components: [
              { id: 'id_field', type: 'text_input' },
              { id: 'other', type: 'text_input', validations: [{ rule_id: 'r1', pattern: '[0-9]+' }] },
            ],
          },
        }),
      ),
      1,
    ).record;
    expect(matched(record)).toBeUndefined();
  });
});

describe('the sizes the redaction pass counted, carried to the session', () => {
  const exact = (record: SessionRecord) => {
    for (const { bytes, ...held } of record.component_hints) expect(bytes).toBe(JSON.stringify(held).length);
    const hints = record.component_hints.reduce((total, hint) => total + hint.bytes, 0);
    const schemas = Object.values(record.schemas).reduce((total, schema) => total + schema.bytes, 0);
    expect(record.held_bytes).toBe(JSON.stringify(record.latest_event).length + hints + schemas);
  };
  const typedEvent = fc.record(
    {
      component_id: fc.constantFrom('id_field', 'other_field'),
      component_type: fc.constantFrom('text_input', 'checkbox'),
      hint: fc.constantFrom('ABCDE1234F', 'abcde', 'a"b\\c', '12', 'checked'),
      masked: fc.oneof(fc.boolean(), fc.constant(null)),
      // Absent, null or sent: the session fills in what is missing.
      timestamp: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 2_000_000_000 })),
      screen: fc.constantFrom('review', 'other'),
      // Small properties are kept on the hint, large ones not.
      properties: fc.dictionary(
        fc.string({ maxLength: 4 }),
        fc.oneof(fc.string({ maxLength: 400 }), fc.integer(), fc.constant('é\u0001')),
        { maxKeys: 4 },
      ),
    },
    { requiredKeys: ['component_id', 'hint'] },
  );

  it('keep every hint and the session exactly at their JSON sizes: timestamps filled in, schema matches added, properties kept or not', () => {
    fc.assert(
      fc.property(fc.array(typedEvent, { minLength: 1, maxLength: 12 }), (events) => {
        // A schema whose pattern the hints are matched against, so stored shapes gain `matches_pattern`.
        let record = applyEvent(newSessionRecord('s1', 0), schemaOn('review', '[A-Z]{5}[0-9]{4}[A-Z]').event, {
          at: 1,
          schemaRegistry: true,
          maxBytes: 1 << 30,
        }).record;
        events.forEach((body, index) => {
          const { event, matchHint, sizes } = redactForIngest(
            EventInSchema.parse({ session_id: 's1', event: 'component_input', ...body }),
          );
          record = applyEvent(record, event, {
            at: 1_795_000_000_000 + index,
            schemaRegistry: true,
            maxBytes: 1 << 30,
            matchHint,
            sizes,
          }).record;
          exact(record);
        });
      }),
      { numRuns: 300, seed: 7 },
    );
  });
});
