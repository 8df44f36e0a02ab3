import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redactEvent, redactValue } from '../../src/domain/event-redaction.js';
import { scrubText } from '../../src/domain/pii.js';
import { EventInSchema } from '../../src/domain/sdk-event.js';
import { plantedEvent } from '../support/identity-events.js';
import { embed, findRaw, identityValue, nearMiss } from '../support/identity-values.js';

/** Every string of a JSON value, keys included. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([key, item]) => [key, ...strings(item)]);
  return [];
}

/** Fixed seeds: a failure is reproducible, and the suite's run time stays what it is. */
const SEED = 1313;

describe('redactEvent: properties over generated events', () => {
  it('no raw identity value survives, at any depth of any field of any event type, and the ids around it stay readable', () => {
    fc.assert(
      fc.property(plantedEvent(fc.constant('s1')), ({ value, body, readable }) => {
        const out = redactEvent(EventInSchema.parse(body));
        const text = JSON.stringify(out);
        expect(findRaw(text, value.raw), `${value.kind} ${value.raw} in ${text}`).toBe(false);
        expect(out).toMatchObject({ screen_id: readable.screen_id, validation_rule_id: readable.validation_rule_id, flow_key: readable.flow_key, errors: readable.errors });
        expect((out.properties as Record<string, unknown>).step).toBe(readable.step);
        expect(out.session_id).toBe('s1');
      }),
      { numRuns: 3000, seed: SEED },
    );
  });

  it('what was masked is listed with its shape: a detected value alone in a field keeps its kind and length', () => {
    fc.assert(
      fc.property(identityValue, (value) => {
        const out = redactEvent(EventInSchema.parse({ session_id: 's1', event: 'analytics_data', properties: { data: { field: value.raw } } }));
        const fields = out.redacted_fields as { path: string; kind: string; length: number }[];
        expect(fields).toContainEqual(expect.objectContaining({ path: 'properties.data.field', length: value.raw.length }));
        // A long number may read as a mobile number or pass the Aadhaar check; every other kind is told apart.
        expect(value.kind === 'number' ? ['number', 'phone', 'aadhaar'] : [value.kind]).toContain(fields[0]!.kind);
      }),
      { numRuns: 1500, seed: SEED },
    );
  });

  it('a masked value is never taken for a new identity value: nothing left in the output reads as one', () => {
    fc.assert(
      fc.property(plantedEvent(fc.constant('s1')), ({ body }) => {
        const { redacted_fields: _fields, ...out } = redactEvent(EventInSchema.parse(body)) as Record<string, unknown>;
        for (const text of strings(out)) expect(scrubText(text).findings, text).toEqual([]);
      }),
      { numRuns: 1000, seed: SEED },
    );
  });

  it('any other client value (trigger or voice body, a log object) goes through the same detectors', () => {
    fc.assert(
      fc.property(identityValue.chain((value) => fc.tuple(fc.constant(value), embed(value.raw), nearMiss)), ([value, text, id]) => {
        const out = redactValue({ signals: { screen: text, errors: [id, text] }, user_id: text, session_id: 's1' });
        expect(findRaw(JSON.stringify(out), value.raw)).toBe(false);
        expect(out.signals.errors[0]).toBe(id);
        expect(out.session_id).toBe('s1');
      }),
      { numRuns: 1000, seed: SEED },
    );
  });
});
