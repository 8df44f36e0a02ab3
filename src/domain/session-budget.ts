/**
 * The session byte budget (SESSION_MAX_BYTES): the JSON size of what a session holds, counted from
 * parts already measured, and what gives way when it is over (oldest hints, then oldest schemas,
 * then the latest event's unknown fields).
 */
import type { EventSizes, RedactedEvent } from './event-redaction.js';
import { hintShapeSize, hintsBytes } from './hint-bytes.js';
import { jsonNumberSize, JsonObjectSize, jsonSize, jsonStringSize } from './json-size.js';
import type { HintShape } from '../privacy/hints.js';
import { schemaIndex } from './schema-index.js';
import type { SdkEvent } from './sdk-event.js';
import { EventInSchema } from './sdk-event.js';
import type { ComponentHint, SessionRecord, ValidationFailure } from './session-record.js';

/** `,"matches_pattern":true` or `false` added to a shape that has other fields. */
export const MATCH_ENTRY_BYTES = 1 + jsonStringSize('matches_pattern') + 1;
export const TIMESTAMP_KEY_BYTES = jsonStringSize('timestamp') + 1;

/**
 * The JSON size of the stored event from the redaction pass's count of the event received: the
 * shape may have gained `matches_pattern`, and the timestamp been filled in.
 */
export function storedBytes(
  incoming: RedactedEvent,
  matched: RedactedEvent,
  stored: SdkEvent,
  sizes: EventSizes | undefined,
): number {
  if (sizes === undefined) return jsonSize(stored);
  let bytes = sizes.bytes;
  if (matched !== incoming) bytes += MATCH_ENTRY_BYTES + ((matched.shape as HintShape).matches_pattern ? 4 : 5);
  if (stored !== matched) {
    const sent = (matched as Record<string, unknown>).timestamp;
    // A null is replaced in place; undefined or absent, the field is new (and the event not empty).
    bytes +=
      sent === null
        ? jsonNumberSize(stored.timestamp as number) - 4
        : 1 + TIMESTAMP_KEY_BYTES + jsonNumberSize(stored.timestamp as number);
  }
  return bytes;
}

/** Fields of an event the service knows (the schema's and what redaction adds); the rest are kept verbatim, budget allowing. */
export const KNOWN_EVENT_FIELDS = new Set([...Object.keys(EventInSchema.shape), 'masked_by', 'shape']);

/** A hint's JSON size from its parts (strings, a boolean, a number, the shape), with its properties' size as measured before. */
export function hintBytes(hint: ComponentHint, propertiesBytes: number): number {
  const size = new JsonObjectSize();
  size.add('component_id', hint.component_id, jsonStringSize(hint.component_id));
  size.add('component_type', hint.component_type, nullableStringSize(hint.component_type));
  size.add('screen', hint.screen, nullableStringSize(hint.screen));
  size.add('hint', hint.hint, jsonStringSize(hint.hint));
  size.add('masked', hint.masked, hint.masked ? 4 : 5);
  if (hint.masked_by !== undefined) size.add('masked_by', hint.masked_by, jsonStringSize(hint.masked_by));
  if (hint.shape !== undefined) size.add('shape', hint.shape, hintShapeSize(hint.shape));
  if (hint.properties !== undefined) size.add('properties', hint.properties, propertiesBytes);
  size.add('updated_at', hint.updated_at, jsonNumberSize(hint.updated_at));
  return size.total;
}

export const nullableStringSize = (text: string | null): number => (text === null ? 4 : jsonStringSize(text));

/** Marks a `latest_event` that lost fields to the session budget. */
export const TRIMMED_MARK = '_trimmed';

export const jsonBytes = (value: unknown): number => (value === null ? 0 : jsonSize(value));

export function failureBytes(failure: ValidationFailure | null): number {
  if (!failure) return 0;
  // Strings only, summed: a failure is small and replaced whole, not worth measuring whole per event.
  let bytes = 128;
  for (const text of [
    failure.screen,
    failure.component_id,
    failure.component_type,
    failure.failure_reason_code,
    failure.validation_rule_id,
    failure.expected_pattern,
    failure.hint,
  ]) {
    bytes += text?.length ?? 0;
  }
  for (const error of failure.errors) bytes += error.length;
  return bytes;
}

export function latestWith(event: Record<string, unknown>, keep: (field: string) => boolean): Record<string, unknown> {
  return Object.fromEntries([...Object.entries(event).filter(([field]) => keep(field)), [TRIMMED_MARK, true]]);
}

/** The counts' JSON length, nothing while there are none (as for a session that never failed). */
export function retryBytes(counts: Record<string, number> | undefined): number {
  let bytes = 0;
  for (const id in counts) bytes += (bytes === 0 ? 2 : 1) + jsonStringSize(id) + 1 + jsonNumberSize(counts[id]!);
  return bytes;
}

/**
 * Holds a record to `maxBytes` of client data, measured as JSON size once per event (a schema's
 * size was measured when it was registered, a hint's when it was stored). What gives way, in order,
 * until it fits:
 *   1. the unknown fields of `latest_event` (a copy of one event: nothing reads them);
 *   2. the oldest component hints;
 *   3. the oldest screen schemas;
 *   4. the `properties` of `latest_event`;
 *   5. the newest schema and the newest hint.
 * A trimmed `latest_event` carries `_trimmed: true`. Its known scalar fields and the last validation
 * failure are always kept: they are bounded by the event schema (a few KiB).
 */
export function withinBudget<
  R extends Pick<
    SessionRecord,
    'latest_event' | 'component_hints' | 'schemas' | 'last_validation_failure' | 'held_bytes'
  >,
>(
  record: R,
  maxBytes: number,
  /** The caller's own fresh object: when nothing gives way, its `held_bytes` is set in place. */
  owned = false,
  /** The JSON size of `latest_event`, when the caller knows it. */
  knownLatestBytes?: number,
  /** The session's validation failures per field, held beside the record's other parts. */
  retries?: Record<string, number>,
): { record: R; trimmed: boolean } {
  let latest = record.latest_event;
  let hints = record.component_hints;
  let schemas = record.schemas;
  let latestBytes = knownLatestBytes ?? jsonBytes(latest);
  let heldHintBytes = hintsBytes(hints);
  let schemaBytes = schemaIndex(schemas).bytes;
  const fixedBytes = failureBytes(record.last_validation_failure) + retryBytes(retries);
  // Every event comes here and nearly all fit: that case allocates nothing but its answer.
  const fits = latestBytes + heldHintBytes + schemaBytes + fixedBytes;
  if (fits <= maxBytes) {
    if (!owned) return { record: { ...record, held_bytes: fits }, trimmed: false };
    record.held_bytes = fits;
    return { record, trimmed: false };
  }
  const held = () => latestBytes + heldHintBytes + schemaBytes + fixedBytes;

  if (latest) {
    latest = latestWith(latest, (field) => KNOWN_EVENT_FIELDS.has(field));
    latestBytes = jsonBytes(latest);
  }
  const dropOldest = (keepNewest: boolean) => {
    while (held() > maxBytes && hints.length > (keepNewest ? 1 : 0)) {
      heldHintBytes -= hints[0]!.bytes;
      hints = hints.slice(1);
    }
    const keys = Object.keys(schemas);
    let dropping = 0;
    while (held() > maxBytes && keys.length - dropping > (keepNewest ? 1 : 0)) {
      schemaBytes -= schemas[keys[dropping]!]!.bytes;
      dropping += 1;
    }
    if (dropping > 0) schemas = Object.fromEntries(Object.entries(schemas).slice(dropping));
  };
  dropOldest(true);
  if (held() > maxBytes && latest && 'properties' in latest) {
    latest = latestWith(latest, (field) => field !== 'properties');
    latestBytes = jsonBytes(latest);
  }
  dropOldest(false);
  return {
    record: { ...record, latest_event: latest, component_hints: hints, schemas, held_bytes: held() },
    trimmed: true,
  };
}
