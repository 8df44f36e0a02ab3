import type { RegisteredSchema } from './screen-schema.js';

/**
 * One object for each schema registered alike by many sessions. A deployed SDK registers the same
 * schemas at the start of every session (docs/decisions/0017-what-the-deployed-sdks-do.md), kilobytes of JSON
 * and more as objects, so each session held its own copy of what every other session held. A
 * registered schema is never changed (registering again builds a new one), and its hash covers all
 * it holds but the screen it was registered for, so sessions that registered the same content for
 * the same screen can share one object.
 *
 * The table holds schemas weakly: an entry lives as long as some session holds its schema, so it
 * grows no further than what the sessions hold, whatever schemas clients send.
 */
const held = new Map<string, WeakRef<RegisteredSchema>>();
const forget = new FinalizationRegistry<string>((key) => {
  if (held.get(key)?.deref() === undefined) held.delete(key);
});

const keyOf = (schema: RegisteredSchema): string => `${schema.schema_hash}\u0000${schema.screen_id}`;

/** The schema some session already holds with the same content for the same screen, else this one (kept for the next). */
export function internSchema(schema: RegisteredSchema): RegisteredSchema {
  const key = keyOf(schema);
  const shared = held.get(key)?.deref();
  if (shared !== undefined) return shared;
  held.set(key, new WeakRef(schema));
  forget.register(schema, key);
  return schema;
}

/**
 * A session's schemas as read back from the store, each replaced by the object another session
 * registered for it, if any: a session woken from the store would otherwise hold copies again.
 * Only looked up, never added: a schema read back was registered by some earlier build, whose
 * derived fields (the patterns, the size) may differ from this build's, and the table hands out
 * only what this process registered. A stored hash is trusted as the store's own writing.
 */
export function internSchemas(schemas: Record<string, RegisteredSchema>): Record<string, RegisteredSchema> {
  let replaced = false;
  const entries = Object.entries(schemas).map(([key, schema]): [string, RegisteredSchema] => {
    const registered = typeof schema.schema_hash === 'string' ? held.get(keyOf(schema))?.deref() : undefined;
    if (registered === undefined || registered === schema) return [key, schema];
    replaced = true;
    return [key, registered];
  });
  // fromEntries keeps the order and defines own properties (a `__proto__` screen stays data), as registering does.
  return replaced ? Object.fromEntries(entries) : schemas;
}

/** How many schemas the table knows (tests). */
export function internedSchemaCount(): number {
  return held.size;
}
