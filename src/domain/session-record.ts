import { hintsBytes, rememberHintsBytes } from './hint-bytes.js';
import { own } from './own.js';
import { internSchema } from './schema-interning.js';
import type { IngestChannel } from './error-window.js';
import type { HintShape } from './redaction.js';
import { hintShapeSize } from './redaction.js';
import type { EventSizes, RedactedEvent } from './event-redaction.js';
import type { RegisteredSchema } from './screen-schema.js';
import { schemaIndex } from './schema-index.js';
import { jsonNumberSize, jsonSize, jsonStringSize, JsonObjectSize } from './json-size.js';
import { schemaFromEvent, screenKey } from './screen-schema.js';
import type { SdkEvent } from './sdk-event.js';
import { AGENT_EVENT_TYPES, EventInSchema, KNOWN_EVENT_TYPES } from './sdk-event.js';

/** Bounds that keep one session's memory small whatever a client sends. */
export const MAX_COMPONENT_HINTS = 100;
/** A KYC flow has a score of fields; this only stops a client inventing field ids forever. */
export const MAX_RETRY_FIELDS = 32;
export const MAX_SCHEMAS = 32;
/** Schemas are kept whole, so the budget is on their total size (oldest dropped first). */
export const MAX_SCHEMA_BYTES = 256 * 1024;
/** A hint's `properties` are kept only when small: they describe the input, they are not a store. */
export const MAX_HINT_PROPERTIES_BYTES = 1024;

export interface ComponentHint {
  component_id: string;
  component_type: string | null;
  screen: string | null;
  hint: string;
  masked: boolean;
  masked_by?: 'server';
  shape?: HintShape;
  properties?: Record<string, unknown>;
  updated_at: number;
  /** What the hint holds (its JSON size), measured once when stored; internal, never shown. */
  bytes: number;
}

export interface ValidationFailure {
  screen: string | null;
  component_id: string | null;
  component_type: string | null;
  errors: string[];
  failure_reason_code: string | null;
  validation_rule_id: string | null;
  expected_pattern: string | null;
  hint: string | null;
  masked: boolean | null;
  masked_by?: 'server';
  shape?: HintShape;
  at: number;
}

/** The session record (docs/decisions/0001-identity-values-masked-on-arrival.md); times are epoch milliseconds from the injected clock. */
export interface SessionRecord {
  session_id: string;
  user_id: string | null;
  client_id: string | null;
  screen: string | null;
  screen_id: string | null;
  latest_event: Record<string, unknown> | null;
  last_validation_failure: ValidationFailure | null;
  component_hints: ComponentHint[];
  /**
   * Validation failures per field (`component_id`) in this session: what the deployed agent reads
   * as a field's `retry_count` (docs/decisions/0017-what-the-deployed-sdks-do.md). At most MAX_RETRY_FIELDS
   * fields, the longest untouched dropped first; counted in `held_bytes` as a fixed part, like the
   * last failure. Absent in sessions stored before it: none.
   */
  retry_counts?: Record<string, number>;
  schemas: Record<string, RegisteredSchema>;
  created_at: number;
  updated_at: number;
  last_user_activity_at: number | null;
  last_trigger_at: number | null;
  /** What the record holds from clients (JSON size of events, hints, schemas), measured at ingest. */
  held_bytes: number;
}

/**
 * Empty collections shared by every new session (most sessions never fill some of them): updates
 * always build new ones, and freezing makes a stray mutation throw instead of leaking across sessions.
 */
const NO_HINTS: ComponentHint[] = Object.freeze([]) as unknown as ComponentHint[];
const NO_SCHEMAS: Record<string, RegisteredSchema> = Object.freeze({});
const NO_RETRIES: Record<string, number> = Object.freeze(Object.create(null) as Record<string, number>);

/** The session's count of validation failures per field; none for a session stored before counts were kept. */
export const retryCounts = (record: Pick<SessionRecord, 'retry_counts'>): Record<string, number> => record.retry_counts ?? NO_RETRIES;

/** The counts after one more failure on `componentId`: a new object, the field moved to the newest place. */
function withRetry(counts: Record<string, number>, componentId: string): Record<string, number> {
  const next: Record<string, number> = Object.create(null) as Record<string, number>;
  let kept = Object.keys(counts).filter((id) => id !== componentId);
  if (kept.length >= MAX_RETRY_FIELDS) kept = kept.slice(kept.length - MAX_RETRY_FIELDS + 1);
  for (const id of kept) next[id] = counts[id]!;
  // Own keys only: a field named `constructor` must not count from Object.prototype's (a stored
  // session's counts come back from JSON as a plain object).
  next[componentId] = (Object.hasOwn(counts, componentId) ? counts[componentId]! : 0) + 1;
  return next;
}

export function newSessionRecord(sessionId: string, at: number): SessionRecord {
  return {
    session_id: sessionId,
    user_id: null,
    client_id: null,
    screen: null,
    screen_id: null,
    latest_event: null,
    last_validation_failure: null,
    component_hints: NO_HINTS,
    retry_counts: NO_RETRIES,
    schemas: NO_SCHEMAS,
    created_at: at,
    updated_at: at,
    last_user_activity_at: null,
    last_trigger_at: null,
    held_bytes: 0,
  };
}

export interface SchemaPush {
  screen_id: string;
  schema_hash: string;
  replaced: boolean;
}

export interface IngestOutcome<R extends SessionRecord = SessionRecord> {
  /** A copy of the record given, whatever else it holds, with the event applied. */
  record: R;
  /** The event as stored: hint masked, timestamp filled in. */
  stored: SdkEvent;
  schemaPush: SchemaPush | undefined;
  warnings: string[];
}

export type HintMatcher = (pattern: string) => boolean | undefined;

export interface IngestOptions {
  at: number;
  schemaRegistry: boolean;
  /** From `hintMatcher`: tests the raw hint against a pattern without handing the value over. */
  matchHint?: HintMatcher | undefined;
  /** SESSION_MAX_BYTES: what the record may hold; see `withinBudget` for what gives way. */
  maxBytes: number;
  /** The event's JSON sizes as the redaction pass counted them; measured here when not given. */
  sizes?: EventSizes | undefined;
}

const present = <T>(value: T | null | undefined): value is T => value !== null && value !== undefined;

/** Validation pattern for a component from the schemas this session holds, current screen first. */
function patternFor(record: SessionRecord, componentId: string | undefined, screen: string | undefined): string | undefined {
  if (!componentId) return undefined;
  const { patterns } = schemaIndex(record.schemas);
  // The index holds every component with a pattern in any schema: most inputs have none, and one
  // lookup says so without reading the current screen's schema.
  if (!patterns.has(componentId)) return undefined;
  const current = screen ? own(record.schemas, screenKey(screen)) : undefined;
  const fromCurrent = current ? own(current.patterns, componentId) : undefined;
  if (fromCurrent) return fromCurrent;
  return patterns.get(componentId);
}

/**
 * Completes the shape of a server-masked hint with `matches_pattern` against the component's
 * registered schema, the one thing the redaction pass could not know.
 */
function withSchemaMatch(record: SessionRecord, event: RedactedEvent, matchHint: HintMatcher | undefined): RedactedEvent {
  const shape = event.shape as HintShape | undefined;
  if (!matchHint || !shape || shape.matches_pattern !== undefined) return event;
  const screen = event.screen ?? event.screen_id ?? record.screen ?? undefined;
  const pattern = patternFor(record, event.component_id ?? undefined, screen);
  const matches = pattern === undefined ? undefined : matchHint(pattern);
  return matches === undefined ? event : { ...event, shape: { ...shape, matches_pattern: matches } };
}

/** `,"matches_pattern":true` or `false` added to a shape that has other fields. */
const MATCH_ENTRY_BYTES = 1 + jsonStringSize('matches_pattern') + 1;
const TIMESTAMP_KEY_BYTES = jsonStringSize('timestamp') + 1;

/**
 * The JSON size of the stored event from the redaction pass's count of the event received: the
 * shape may have gained `matches_pattern`, and the timestamp been filled in.
 */
function storedBytes(incoming: RedactedEvent, matched: RedactedEvent, stored: SdkEvent, sizes: EventSizes | undefined): number {
  if (sizes === undefined) return jsonSize(stored);
  let bytes = sizes.bytes;
  if (matched !== incoming) bytes += MATCH_ENTRY_BYTES + ((matched.shape as HintShape).matches_pattern ? 4 : 5);
  if (stored !== matched) {
    const sent = (matched as Record<string, unknown>).timestamp;
    // A null is replaced in place; undefined or absent, the field is new (and the event not empty).
    bytes += sent === null ? jsonNumberSize(stored.timestamp as number) - 4 : 1 + TIMESTAMP_KEY_BYTES + jsonNumberSize(stored.timestamp as number);
  }
  return bytes;
}

function upsertHint(hints: ComponentHint[], next: ComponentHint): ComponentHint[] {
  // One array of the final length: the same component typed again is the common case, and it is
  // the newest hint, so the search starts there.
  let replaced = hints.length - 1;
  while (replaced >= 0 && hints[replaced]!.component_id !== next.component_id) replaced -= 1;
  const kept = replaced >= 0 ? hints.length - 1 : hints.length;
  // Least recently updated components go first once the bound is reached.
  const from = Math.max(0, kept + 1 - MAX_COMPONENT_HINTS);
  const updated: ComponentHint[] = new Array<ComponentHint>(kept + 1 - from);
  let bytes = hintsBytes(hints) + next.bytes;
  let at = 0;
  let skipped = 0;
  for (let index = 0; index < hints.length; index += 1) {
    if (index === replaced) {
      bytes -= hints[index]!.bytes;
      continue;
    }
    if (skipped < from) {
      bytes -= hints[index]!.bytes;
      skipped += 1;
    } else updated[at++] = hints[index]!;
  }
  updated[at] = next;
  rememberHintsBytes(updated, bytes);
  return updated;
}

function registerSchema(
  schemas: Record<string, RegisteredSchema>,
  schema: RegisteredSchema,
): { schemas: Record<string, RegisteredSchema>; push: SchemaPush | undefined } {
  const key = screenKey(schema.screen_id);
  const existing = own(schemas, key);
  if (existing?.schema_hash === schema.schema_hash) return { schemas, push: undefined };
  // fromEntries defines own properties, so even a `__proto__` screen id is stored as data.
  const next: Record<string, RegisteredSchema> = Object.fromEntries([...Object.entries(schemas).filter(([held]) => held !== key), [key, schema]]);
  let bytes = Object.values(next).reduce((total, held) => total + held.bytes, 0);
  for (const oldest of Object.keys(next)) {
    if (oldest === key || (Object.keys(next).length <= MAX_SCHEMAS && bytes <= MAX_SCHEMA_BYTES)) break;
    bytes -= next[oldest]!.bytes;
    delete next[oldest];
  }
  return {
    schemas: next,
    push: { screen_id: schema.screen_id, schema_hash: schema.schema_hash, replaced: existing !== undefined },
  };
}

/** Spec 4.1 rules 1-6 as a pure function of the record, the event and the time. */
export function applyEvent<R extends SessionRecord>(record: R, incoming: RedactedEvent, options: IngestOptions): IngestOutcome<R> {
  const { patch, ...outcome } = eventPatch(record, incoming, options);
  return { ...outcome, record: { ...record, ...patch } };
}

/** The fields an event sets; the rest of the record stays as it was. */
export type EventPatch = Pick<
  SessionRecord,
  'latest_event' | 'updated_at' | 'user_id' | 'client_id' | 'screen' | 'screen_id' | 'component_hints' | 'schemas' | 'last_validation_failure' | 'held_bytes'
> &
  Partial<Pick<SessionRecord, 'last_user_activity_at' | 'retry_counts'>>;

/**
 * What `applyEvent` does, as the fields it changes rather than a copy of the whole record: the
 * session actor assigns this, so an event copies the context once (in the assign) rather than four
 * times (BENCHMARKS.md). The patch is a fresh object the caller may add to.
 */
export function eventPatch(record: SessionRecord, incoming: RedactedEvent, options: IngestOptions): Omit<IngestOutcome, 'record'> & { patch: EventPatch } {
  const { at } = options;
  const redacted = withSchemaMatch(record, incoming, options.matchHint);
  const stored: SdkEvent = present(redacted.timestamp) ? redacted : { ...redacted, timestamp: Math.floor(at / 1000) };
  const latestBytes = storedBytes(incoming, redacted, stored, options.sizes);
  const screen = stored.screen ?? stored.screen_id;
  const next: EventPatch = {
    latest_event: stored,
    updated_at: at,
    user_id: stored.user_id ?? record.user_id,
    client_id: stored.client_id ?? record.client_id,
    screen: screen ?? record.screen,
    screen_id: stored.screen_id ?? (present(stored.screen) ? stored.screen : record.screen_id),
    component_hints: record.component_hints,
    schemas: record.schemas,
    last_validation_failure: record.last_validation_failure,
    held_bytes: record.held_bytes,
  };
  if (!AGENT_EVENT_TYPES.has(stored.event)) next.last_user_activity_at = at;

  if (stored.event === 'component_input' && present(stored.component_id) && present(stored.hint)) {
    // Optional fields set one by one (a conditional spread builds an object to spread), in the order they are shown.
    const hint: ComponentHint = {
      component_id: stored.component_id,
      component_type: stored.component_type ?? null,
      screen: next.screen,
      hint: stored.hint,
      masked: stored.masked ?? false,
    } as ComponentHint;
    if (stored.masked_by === 'server') hint.masked_by = 'server';
    if (stored.shape) hint.shape = stored.shape as HintShape;
    // The redaction pass measured the properties; the stored event's are the same object.
    const propertiesBytes = stored.properties ? (options.sizes ? options.sizes.propertiesBytes : jsonSize(stored.properties)) : 0;
    if (stored.properties && propertiesBytes <= MAX_HINT_PROPERTIES_BYTES) hint.properties = stored.properties;
    hint.updated_at = at;
    // The hint's JSON size without `bytes` itself, as stored.
    hint.bytes = hintBytes(hint, propertiesBytes);
    next.component_hints = upsertHint(record.component_hints, hint);
  }

  if (stored.event === 'validation_failed') {
    if (present(stored.component_id)) next.retry_counts = withRetry(retryCounts(record), stored.component_id);
    next.last_validation_failure = {
      screen: next.screen,
      component_id: stored.component_id ?? null,
      component_type: stored.component_type ?? null,
      errors: stored.errors ?? [],
      failure_reason_code: stored.failure_reason_code ?? null,
      validation_rule_id: typeof stored.validation_rule_id === 'string' ? stored.validation_rule_id : null,
      expected_pattern: typeof stored.expected_pattern === 'string' ? stored.expected_pattern : null,
      hint: stored.hint ?? null,
      masked: present(stored.hint) ? (stored.masked ?? false) : null,
      ...(stored.masked_by === 'server' ? { masked_by: 'server' as const } : {}),
      ...(stored.shape ? { shape: stored.shape as HintShape } : {}),
      at,
    };
  }

  let schemaPush: SchemaPush | undefined;
  if (stored.event === 'screen_schema' && options.schemaRegistry) {
    const registeredNow = schemaFromEvent(stored.properties ?? undefined, screen ?? undefined);
    const schema = registeredNow && internSchema(registeredNow);
    if (schema) {
      const registered = registerSchema(record.schemas, schema);
      next.schemas = registered.schemas;
      schemaPush = registered.push;
      if (!present(screen)) {
        next.screen = schema.screen_id;
        next.screen_id = schema.screen_id;
      }
    }
  }

  const warnings = eventTypeWarnings(stored.event);
  const budgeted = withinBudget(next, options.maxBytes, true, latestBytes, next.retry_counts ?? record.retry_counts);
  if (budgeted.trimmed) warnings.push('session_budget_exceeded');
  if (schemaPush && !own(budgeted.record.schemas, screenKey(schemaPush.screen_id))) schemaPush = undefined;
  return { patch: budgeted.record, stored, schemaPush, warnings };
}

/**
 * The warnings an event earns by its type alone, whatever the session holds: all an answer given
 * before the session applied the event can carry (cluster mode, docs/cluster-mode.md).
 */
export const eventTypeWarnings = (eventType: string): string[] => (KNOWN_EVENT_TYPES.has(eventType) ? [] : ['unknown_event_type']);

/** Fields of an event the service knows (the schema's and what redaction adds); the rest are kept verbatim, budget allowing. */
const KNOWN_EVENT_FIELDS = new Set([...Object.keys(EventInSchema.shape), 'masked_by', 'shape']);

/** A hint's JSON size from its parts (strings, a boolean, a number, the shape), with its properties' size as measured before. */
function hintBytes(hint: ComponentHint, propertiesBytes: number): number {
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

const nullableStringSize = (text: string | null): number => (text === null ? 4 : jsonStringSize(text));

/** Marks a `latest_event` that lost fields to the session budget. */
export const TRIMMED_MARK = '_trimmed';

const jsonBytes = (value: unknown): number => (value === null ? 0 : jsonSize(value));

function failureBytes(failure: ValidationFailure | null): number {
  if (!failure) return 0;
  // Strings only, summed: a failure is small and replaced whole, not worth measuring whole per event.
  let bytes = 128;
  for (const text of [failure.screen, failure.component_id, failure.component_type, failure.failure_reason_code, failure.validation_rule_id, failure.expected_pattern, failure.hint]) {
    bytes += text?.length ?? 0;
  }
  for (const error of failure.errors) bytes += error.length;
  return bytes;
}

function latestWith(event: Record<string, unknown>, keep: (field: string) => boolean): Record<string, unknown> {
  return Object.fromEntries([...Object.entries(event).filter(([field]) => keep(field)), [TRIMMED_MARK, true]]);
}

/** The counts' JSON length, nothing while there are none (as for a session that never failed). */
function retryBytes(counts: Record<string, number> | undefined): number {
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
export function withinBudget<R extends Pick<SessionRecord, 'latest_event' | 'component_hints' | 'schemas' | 'last_validation_failure' | 'held_bytes'>>(
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
  return { record: { ...record, latest_event: latest, component_hints: hints, schemas, held_bytes: held() }, trimmed: true };
}

/** The activity payload of an `event` item: what an operator needs, nothing more. */
export function eventActivityPayload(stored: SdkEvent, warnings: string[], channel?: IngestChannel): Record<string, unknown> {
  const payload: Record<string, unknown> = {
    event: stored.event,
    screen: stored.screen ?? stored.screen_id ?? null,
    component_id: stored.component_id ?? null,
  };
  if (present(stored.hint)) {
    payload.hint = stored.hint;
    payload.masked = stored.masked ?? false;
  }
  if (present(stored.errors)) payload.errors = stored.errors;
  if (present(stored.failure_reason_code)) payload.failure_reason_code = stored.failure_reason_code;
  if (warnings.length > 0) payload.warnings = warnings;
  // An operator seeing one failure listed twice can tell the SDK's fast copy from its durable one.
  if (channel === 'control_plane') payload.channel = channel;
  return payload;
}
