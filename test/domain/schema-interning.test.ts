import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { redactForIngest } from '../../src/domain/event-redaction.js';
import { internSchemas, internedSchemaCount } from '../../src/domain/schema-interning.js';
import type { RegisteredSchema } from '../../src/domain/screen-schema.js';
import { schemaFromEvent } from '../../src/domain/screen-schema.js';
import { EventInSchema } from '../../src/domain/sdk-event.js';
import type { SessionRecord } from '../../src/domain/session-record.js';
import { applyEvent } from '../../src/domain/session-event.js';
import { newSessionRecord } from '../../src/domain/session-record.js';

/** Each call parses the event anew, as each session's request does: equal content, separate objects. */
const registering = (sessionId: string, screen: string | undefined, properties: Record<string, unknown>) =>
  redactForIngest(
    EventInSchema.parse({ session_id: sessionId, event: 'screen_schema', ...(screen ? { screen } : {}), properties }),
  ).event;

const panSchema = (note = '') => ({
  screen_id: 'pan_details',
  display_name: `PAN${note}`,
  components: [
    {
      id: 'pan_field',
      type: 'text_input',
      validations: [{ rule_id: 'pan_format_v1', pattern: '[A-Z]{5}[0-9]{4}[A-Z]' }],
    },
  ],
});

const register = (record: SessionRecord, event: ReturnType<typeof registering>, at = 1) =>
  applyEvent(record, event, { at, schemaRegistry: true, maxBytes: 1 << 30 }).record;
const only = (record: SessionRecord): RegisteredSchema => {
  const schemas = Object.values(record.schemas);
  expect(schemas).toHaveLength(1);
  return schemas[0]!;
};

describe('schemas registered alike by many sessions', () => {
  it('are one object, whichever session registered it first', () => {
    const first = register(newSessionRecord('s1', 0), registering('s1', 'pan_details', panSchema()));
    const second = register(newSessionRecord('s2', 0), registering('s2', 'pan_details', panSchema()));
    expect(only(second)).toBe(only(first));
    // Every session still has its own record of what it holds.
    expect(second.schemas).not.toBe(first.schemas);
    expect(second.held_bytes).toBe(first.held_bytes);
  });

  it('are not shared when the content or the screen differs', () => {
    const held = only(register(newSessionRecord('s1', 0), registering('s1', 'pan_details', panSchema())));
    const changed = only(register(newSessionRecord('s2', 0), registering('s2', 'pan_details', panSchema(' v2'))));
    expect(changed).not.toBe(held);
    expect(changed.schema).toMatchObject({ display_name: 'PAN v2' });

    // The same properties without a screen_id of their own register for the event's screen.
    const { screen_id: _screenId, ...unnamed } = panSchema();
    const onReview = only(register(newSessionRecord('s3', 0), registering('s3', 'review', unnamed)));
    const onAddress = only(register(newSessionRecord('s4', 0), registering('s4', 'address', unnamed)));
    expect(onReview.schema_hash).toBe(onAddress.schema_hash);
    expect(onAddress).not.toBe(onReview);
    expect([onReview.screen_id, onAddress.screen_id]).toEqual(['review', 'address']);
  });
});

describe('a session read back from the store', () => {
  const storedCopy = (schemas: Record<string, RegisteredSchema>) =>
    JSON.parse(JSON.stringify(schemas)) as Record<string, RegisteredSchema>;

  it('takes the object another session registered, in the order it held them', () => {
    let record = register(
      newSessionRecord('s1', 0),
      registering('s1', 'address', { screen_id: 'address', components: [] }),
    );
    record = register(record, registering('s1', 'pan_details', panSchema()), 2);
    const stored = storedCopy(record.schemas);
    const restored = internSchemas(stored);
    expect(Object.keys(restored)).toEqual(Object.keys(record.schemas));
    for (const key of Object.keys(record.schemas)) expect(restored[key]).toBe(record.schemas[key]);
  });

  it('keeps its own copy of a schema no session registered here, and hands it to no one', () => {
    // As an earlier build wrote it: the same content and hash, patterns worked out otherwise.
    const written = schemaFromEvent(panSchema(' stored'), 'pan_details')!;
    const stored = storedCopy({ pan_details: { ...written, patterns: { pan_field: 'an older build' } } });
    // No session here holds its twin: it is left as read, and not added to the table.
    expect(internSchemas(stored)).toBe(stored);
    const fresh = only(register(newSessionRecord('s2', 0), registering('s2', 'pan_details', panSchema(' stored'))));
    // The fresh registration's own patterns, not the stored row's.
    expect(fresh.patterns).toEqual({ pan_field: '[A-Z]{5}[0-9]{4}[A-Z]' });
    expect(internSchemas(stored).pan_details).toBe(fresh);
  });
});

describe('the table', () => {
  it('keeps no schema that no session holds', async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const before = internedSchemaCount();
    (() => {
      for (let n = 0; n < 50; n += 1)
        register(newSessionRecord(`g${n}`, 0), registering(`g${n}`, 'pan_details', panSchema(` only ${n}`)));
    })();
    expect(internedSchemaCount()).toBe(before + 50);
    // Finalization callbacks run in tasks after a collection; a few rounds are enough.
    for (let round = 0; round < 20 && internedSchemaCount() > before; round += 1) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(internedSchemaCount()).toBeLessThanOrEqual(before);
  });
});
