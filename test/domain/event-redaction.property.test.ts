import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redactEvent, redactSizedEvent, redactValue } from '../../src/domain/event-redaction.js';
import { scrubText } from '../../src/privacy/scrub.js';
import { EventInSchema } from '../../src/domain/sdk-event.js';
import { plantedEvent } from '../support/identity-events.js';
import { classicValue, embed, identityValue, leaks, nearMiss } from '../support/identity-values.js';

/** Every string of a JSON value, keys included. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([key, item]) => [key, ...strings(item)]);
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
        expect(leaks(text, value), `${value.kind} ${value.raw} in ${text}`).toBe(false);
        expect(out).toMatchObject({
          screen_id: readable.screen_id,
          validation_rule_id: readable.validation_rule_id,
          flow_key: readable.flow_key,
          errors: readable.errors,
        });
        // A component whose name says it holds an identity value (`otp_input`) has all it sends masked whole.
        const says =
          /otp|pin|cvv|upi|account|card|name|address|phone|mobile|email|aadha|dob|passport|voter|ifsc|^pan$/i.test(
            String(body.component_id ?? ''),
          ) ||
          /otp|pin|cvv|upi|account|card|name|address|phone|mobile|email|aadha|dob|passport|voter|ifsc|^pan$/i.test(
            String(body.component_type ?? ''),
          );
        if (!says) expect((out.properties as Record<string, unknown>).step).toBe(readable.step);
        expect(out.session_id).toBe('s1');
      }),
      { numRuns: 1500, seed: SEED },
    );
  });

  it('what was masked is listed with its shape: a detected value alone in a field keeps its kind and length', () => {
    fc.assert(
      fc.property(classicValue, (value) => {
        const out = redactEvent(
          EventInSchema.parse({
            session_id: 's1',
            event: 'analytics_data',
            properties: { data: { field: value.raw } },
          }),
        );
        const fields = out.redacted_fields as { path: string; kind: string; length: number }[];
        expect(fields).toContainEqual(
          expect.objectContaining({ path: 'properties.data.field', length: value.raw.length }),
        );
        // A long number may read as a mobile number or pass the Aadhaar, VID or card check; every other kind is told apart.
        expect(value.kind === 'number' ? ['number', 'phone', 'aadhaar', 'vid', 'card'] : [value.kind]).toContain(
          fields[0]!.kind,
        );
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

  it("only the top level's session_id is left as sent: one nested anywhere is client data, scanned like any other", () => {
    const nested = (raw: string) =>
      fc.constantFrom(
        { properties: { session_id: raw } },
        { data: [{ session_id: raw }] },
        { properties: { a: { b: [{ Session_Id: raw }] } } },
      );
    fc.assert(
      fc.property(
        identityValue.chain((value) => fc.tuple(fc.constant(value), embed(value.raw).chain(nested))),
        ([value, extra]) => {
          const event = redactEvent(EventInSchema.parse({ session_id: 's1', event: 'identity', ...extra }));
          expect(leaks(JSON.stringify(event), value), JSON.stringify(event)).toBe(false);
          expect(event.session_id).toBe('s1');
          const body = redactValue({ session_id: 's1', ...extra });
          expect(leaks(JSON.stringify(body), value), JSON.stringify(body)).toBe(false);
          expect(body.session_id).toBe('s1');
        },
      ),
      { numRuns: 500, seed: SEED },
    );
  });

  it('a value split by invisible or control characters, or spaced out, is still masked as a reader (or the system prompt) would see it', () => {
    // What a reader sees: invisible characters gone, control characters and whitespace runs one space.
    const visible = (text: string) => text.replace(/\p{Cf}/gu, '').replace(/[\s\p{Cc}]+/gu, ' ');
    const hidden = identityValue.chain((value) =>
      fc
        .tuple(
          fc.integer({ min: 1, max: value.raw.length - 1 }),
          fc.constantFrom('\u200b', '\u00ad', '\u200e', '\u2060', '\ufeff'),
          fc.constantFrom('\n', '  ', '\t', '\r\n', ' \u200b '),
        )
        .map(([at, invisible, spacing]) => ({
          value,
          sent: `${value.raw.slice(0, at)}${invisible}${value.raw.slice(at)}`.replace(/ /g, spacing),
        })),
    );
    fc.assert(
      fc.property(hidden, ({ value, sent }) => {
        const out = redactEvent(
          EventInSchema.parse({
            session_id: 's1',
            event: 'analytics_data',
            properties: { note: `sent ${sent} today` },
          }),
        );
        const note = visible((out.properties as { note: string }).note);
        expect(leaks(note, value), `${JSON.stringify(sent)} → ${JSON.stringify(note)}`).toBe(false);
      }),
      { numRuns: 1500, seed: SEED },
    );
  });

  it('any other client value (trigger or voice body, a log object) goes through the same detectors', () => {
    fc.assert(
      fc.property(
        identityValue.chain((value) => fc.tuple(fc.constant(value), embed(value.raw), nearMiss)),
        ([value, text, id]) => {
          const out = redactValue({ signals: { screen: text, errors: [id, text] }, user_id: text, session_id: 's1' });
          expect(leaks(JSON.stringify(out), value)).toBe(false);
          expect(out.signals.errors[0]).toBe(id);
          expect(out.session_id).toBe('s1');
        },
      ),
      { numRuns: 1000, seed: SEED },
    );
  });
});

const sizeOf = (value: unknown) => JSON.stringify(value)?.length ?? 0;

/** Any field an SDK may send, known or not, with keys and values that redaction changes, escapes and JSON's odd characters. */
const anyBody = fc
  .record({
    known: fc.record(
      {
        screen: fc.string({ maxLength: 8 }),
        component_id: fc.constantFrom('pan_field', 'otp_input', 'email'),
        component_type: fc.constantFrom('text_input', 'checkbox', 'otp'),
        hint: fc.oneof(
          fc.string({ maxLength: 12 }),
          fc.constantFrom('ABCDE1234F', 'a@b.co', '9876543210', 'checked', '1990-01-01'),
        ),
        masked: fc.oneof(fc.boolean(), fc.constant(null)),
        timestamp: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 2e9 })),
        shape: fc.constant({ length: 1 }),
        masked_by: fc.constant('client'),
        redacted_fields: fc.constant([]),
      },
      { requiredKeys: [] },
    ),
    // Keys holding identity values are masked, and two can become the same key.
    extra: fc.dictionary(
      fc.oneof(
        fc.string({ maxLength: 6 }),
        fc.constantFrom('ABCDE1234F', 'ZYXWV1234F', 'ABCDE1234G', 'x@y.io', '__proto__', 'a"\\b'),
      ),
      fc.jsonValue({ maxDepth: 3 }),
      { maxKeys: 4 },
    ),
    properties: fc.option(
      fc.dictionary(
        fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('pan', 'session_id', 'ABCDE1234F', 'ZYXWV1234F')),
        fc.jsonValue({ maxDepth: 3 }),
        { maxKeys: 5 },
      ),
      { nil: undefined },
    ),
  })
  .map(({ known, extra, properties }) => ({
    ...extra,
    session_id: 's1',
    event: 'component_input',
    ...known,
    ...(properties === undefined ? {} : { properties }),
  }));

describe('redactSizedEvent: the size the pass counts is that of what it returns', () => {
  it('for any event, planted identity values and all, equals JSON.stringify of the redacted event and of its properties', () => {
    const check = (body: unknown) => {
      const parsed = EventInSchema.safeParse(body);
      // Every generated body is one the API accepts.
      expect(parsed.success).toBe(true);
      if (!parsed.success) return;
      const { event, bytes, propertiesBytes } = redactSizedEvent(parsed.data);
      expect(bytes).toBe(sizeOf(event));
      expect(propertiesBytes).toBe(event.properties === undefined ? 0 : sizeOf(event.properties));
    };
    fc.assert(fc.property(anyBody, check), { numRuns: 3000, seed: SEED });
    fc.assert(
      fc.property(plantedEvent(fc.constant('s1')), ({ body }) => check(body)),
      { numRuns: 1000, seed: SEED },
    );
  });
});
