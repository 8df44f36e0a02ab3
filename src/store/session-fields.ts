/**
 * How the SQLite store splits a session's context into its state and its fields, and puts them
 * back together. A session's screen schemas (up to 256 KiB) change on a `screen_schema` event and
 * each component hint on an input to that component, while every event changes the rest: a
 * deployed SDK registers 14 schemas at the start of a session and then sends an event per field
 * typed, so writing the whole context with each event made a durable event cost 3.4 times one
 * on a bench session (docs/decisions/0013-schemas-and-hints-beside-the-state.md). Kept apart, an event writes the state and
 * the one field it changed.
 *
 * Fields are keyed `schemas` and `hint:<component_id>`. The state keeps the order of the hints as
 * their component ids (`fields.hint_ids`); its `fields` key marks a state written this way, and a
 * state without it (written before) holds its schemas and hints itself.
 */

const SCHEMAS_FIELD = 'schemas';
export const HINT_PREFIX = 'hint:';

/** What a context is written as: the state's JSON and the fields beside it. */
export interface SplitContext {
  state: string;
  fields: [key: string, value: unknown][];
  /** The component ids of the hints, in order; undefined when the state holds its hints itself. */
  hintIds: string[] | undefined;
}

interface StateLayout {
  value: unknown;
  context: Record<string, unknown>;
  fields?: { hint_ids?: string[] };
}

function isEmptyObject(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  for (const key in value) if (Object.hasOwn(value, key)) return false;
  return true;
}

const hintId = (hint: unknown): string | undefined => {
  const id = (hint as { component_id?: unknown } | null)?.component_id;
  return typeof id === 'string' ? id : undefined;
};

export function splitContext(value: unknown, context: Record<string, unknown>): SplitContext {
  const { schemas, component_hints: hints, ...rest } = context;
  const fields: [string, unknown][] = [];
  // Empty ones stay in the state (a few bytes): most sessions have none, and a field row for
  // each of their saves would cost more than it saves (new sessions share one empty object, so
  // it could not be known as written either). The state's copy wins over a field's.
  if (isEmptyObject(schemas)) rest.schemas = schemas;
  else if (schemas !== undefined) fields.push([SCHEMAS_FIELD, schemas]);
  let hintIds: string[] | undefined;
  if (Array.isArray(hints)) {
    hintIds = new Array<string>(hints.length);
    for (let index = 0; index < hints.length; index += 1) {
      const id = hintId(hints[index]);
      // Hints are keyed by component: one without an id (never made by the session) keeps the list whole.
      if (id === undefined) {
        hintIds = undefined;
        break;
      }
      hintIds[index] = id;
    }
  }
  if (hintIds)
    for (let index = 0; index < hintIds.length; index += 1)
      fields.push([HINT_PREFIX + hintIds[index]!, (hints as unknown[])[index]]);
  else if (hints !== undefined) rest.component_hints = hints;
  // V8's JSON.stringify took a state holding an object without a prototype (the session's retry
  // counts are one, so that no field id reads an inherited property) much longer than the same
  // state of plain objects: such a value is written as a plain copy of itself, the same JSON
  // (docs/decisions/0012-where-a-durable-request-goes.md).
  for (const key in rest) {
    const part = rest[key];
    if (typeof part === 'object' && part !== null && Object.getPrototypeOf(part) === null) rest[key] = { ...part };
  }
  const layout: StateLayout = { value, context: rest, fields: hintIds ? { hint_ids: hintIds } : {} };
  return { state: JSON.stringify(layout), fields, hintIds };
}

/**
 * The component ids of the hints kept beside a state, in order; undefined when the state holds its
 * hints itself, or cannot be read (a damaged row: the session is set aside when it is loaded, and
 * opening the store must not fail on it).
 */
export function hintIdsOf(state: string): string[] | undefined {
  try {
    const ids = (JSON.parse(state) as Partial<StateLayout> | null)?.fields?.hint_ids;
    return Array.isArray(ids) && ids.every((id) => typeof id === 'string') ? ids : undefined;
  } catch {
    return undefined;
  }
}

/** The context back from its state and its fields' JSON (by key); a state from before holds its own. */
export function joinContext(
  state: string,
  fieldJson: (key: string) => string | undefined,
): { value: unknown; context: Record<string, unknown> } {
  const { value, context, fields } = JSON.parse(state) as StateLayout;
  if (fields === undefined) return { value, context };
  const schemas = context.schemas === undefined ? fieldJson(SCHEMAS_FIELD) : undefined;
  if (schemas !== undefined) context.schemas = JSON.parse(schemas);
  if (fields.hint_ids) {
    const hints: unknown[] = [];
    for (const id of fields.hint_ids) {
      const hint = fieldJson(HINT_PREFIX + id);
      if (hint !== undefined) hints.push(JSON.parse(hint));
    }
    context.component_hints = hints;
  }
  return { value, context };
}
