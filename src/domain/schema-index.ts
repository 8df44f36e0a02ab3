import type { RegisteredSchema } from './screen-schema.js';

/** What an event needs to know of a session's schemas as a whole. */
export interface SchemaIndex {
  /** The schemas' sizes summed, for the session budget. */
  bytes: number;
  /** Component id → its pattern in the first schema (in the record's order) that has one. */
  patterns: ReadonlyMap<string, string>;
}

/**
 * A session's schemas object is never changed once built (registering or dropping a schema builds
 * a new one), so what is derived from it holds for as long as it lives. Worked out once instead of
 * on every event: a deployed SDK's session holds 14 schemas, and summing them and searching each
 * for a component's pattern touched every one of them per event (docs/decisions/0014-nothing-outlives-the-young-generation.md).
 * A WeakMap, so an index goes with its schemas.
 */
const indexes = new WeakMap<Readonly<Record<string, RegisteredSchema>>, SchemaIndex>();

export function schemaIndex(schemas: Readonly<Record<string, RegisteredSchema>>): SchemaIndex {
  let index = indexes.get(schemas);
  if (index === undefined) {
    index = build(schemas);
    indexes.set(schemas, index);
  }
  return index;
}

function build(schemas: Readonly<Record<string, RegisteredSchema>>): SchemaIndex {
  let bytes = 0;
  const patterns = new Map<string, string>();
  for (const schema of Object.values(schemas)) {
    bytes += schema.bytes;
    for (const [componentId, pattern] of Object.entries(schema.patterns)) {
      if (pattern && !patterns.has(componentId)) patterns.set(componentId, pattern);
    }
  }
  return { bytes, patterns };
}
