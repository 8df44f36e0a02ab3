/**
 * What one SDK event does to the session record (docs/reference/events.md): the fields it sets, the
 * event as stored, the schema it registers, the warnings, and the activity payload that records it.
 */
import { MAX_HINT_PROPERTIES_BYTES, upsertHint } from './component-hints.js';
import type { IngestChannel } from './error-window.js';
import type { EventSizes, RedactedEvent } from './event-redaction.js';
import { jsonSize } from './json-size.js';
import { own } from './own.js';
import type { HintShape } from '../privacy/hints.js';
import { internSchema } from './schema-interning.js';
import { schemaFromEvent, screenKey } from './screen-schema.js';
import type { SdkEvent } from './sdk-event.js';
import { AGENT_EVENT_TYPES, HANDOFF_UNANSWERED, KNOWN_EVENT_TYPES, OPERATOR_JOINED } from './sdk-event.js';
import { hintBytes, storedBytes, withinBudget } from './session-budget.js';
import type { ComponentHint, SessionRecord } from './session-record.js';
import { retryCounts } from './session-record.js';
import type { HintMatcher, SchemaPush } from './session-schemas.js';
import { registerSchema, withSchemaMatch } from './session-schemas.js';
import { HELD_BYTES_FACTOR, heldDensity } from './held-density.js';
import { turnText } from './call-record.js';

/** A KYC flow has a score of fields; this only stops a client inventing field ids forever. */
export const MAX_RETRY_FIELDS = 32;

export interface IngestOutcome<R extends SessionRecord = SessionRecord> {
  /** A copy of the record given, whatever else it holds, with the event applied. */
  record: R;
  /** The event as stored: hint masked, timestamp filled in. */
  stored: SdkEvent;
  schemaPush: SchemaPush | undefined;
  warnings: string[];
}

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

export const present = <T>(value: T | null | undefined): value is T => value !== null && value !== undefined;
/** The counts after one more failure on `componentId`: a new object, the field moved to the newest place. */
export function withRetry(counts: Record<string, number>, componentId: string): Record<string, number> {
  const next: Record<string, number> = Object.create(null) as Record<string, number>;
  let kept = Object.keys(counts).filter((id) => id !== componentId);
  if (kept.length >= MAX_RETRY_FIELDS) kept = kept.slice(kept.length - MAX_RETRY_FIELDS + 1);
  for (const id of kept) next[id] = counts[id]!;
  // Own keys only: a field named `constructor` must not count from Object.prototype's (a stored
  // session's counts come back from JSON as a plain object).
  next[componentId] = (Object.hasOwn(counts, componentId) ? counts[componentId]! : 0) + 1;
  return next;
}

/** The rules of docs/reference/events.md as a pure function of the record, the event and the time. */
export function applyEvent<R extends SessionRecord>(
  record: R,
  incoming: RedactedEvent,
  options: IngestOptions,
): IngestOutcome<R> {
  const { patch, ...outcome } = eventPatch(record, incoming, options);
  return { ...outcome, record: { ...record, ...patch } };
}

/** The fields an event sets; the rest of the record stays as it was. */
export type EventPatch = Pick<
  SessionRecord,
  | 'latest_event'
  | 'updated_at'
  | 'user_id'
  | 'client_id'
  | 'screen'
  | 'screen_id'
  | 'component_hints'
  | 'schemas'
  | 'last_validation_failure'
  | 'held_bytes'
> &
  Partial<Pick<SessionRecord, 'last_user_activity_at' | 'retry_counts' | 'held_density' | 'callback_owed_at'>>;

/**
 * What `applyEvent` does, as the fields it changes rather than a copy of the whole record: the
 * session actor assigns this, so an event copies the context once (in the assign) rather than four
 * times (git show d1df1cf:docs/benchmark-history.md). The patch is a fresh object the caller may add to.
 */
export function eventPatch(
  record: SessionRecord,
  incoming: RedactedEvent,
  options: IngestOptions,
): Omit<IngestOutcome, 'record'> & { patch: EventPatch } {
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
  // Kept at its highest: what an event left in hints stays when a later, flatter one replaces it.
  const density = heldDensity(options.sizes);
  if (density > (record.held_density ?? HELD_BYTES_FACTOR)) next.held_density = density;

  // A call back is owed once the agent gave up waiting for a person, and no longer once one joined (docs/explanation/handoff.md).
  if (stored.event === HANDOFF_UNANSWERED) next.callback_owed_at = at;
  else if (stored.event === OPERATOR_JOINED && record.callback_owed_at) next.callback_owed_at = null;

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
    const propertiesBytes = stored.properties
      ? options.sizes
        ? options.sizes.propertiesBytes
        : jsonSize(stored.properties)
      : 0;
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
 * before the session applied the event can carry (cluster mode, docs/explanation/cluster.md).
 */
export const eventTypeWarnings = (eventType: string): string[] =>
  KNOWN_EVENT_TYPES.has(eventType) ? [] : ['unknown_event_type'];

/**
 * A voice turn's role, channel and text, as the redaction pass left the text (docs/explanation/calls.md): the
 * call record's transcript is built from these items.
 */
function turnFields(properties: SdkEvent['properties']): {
  role: 'user' | 'agent';
  channel: 'voice' | 'chat';
  text: string | null;
} {
  const role = properties?.role === 'agent' ? 'agent' : 'user';
  const channel = properties?.channel === 'chat' ? 'chat' : 'voice';
  const text = typeof properties?.text === 'string' ? turnText(properties.text) : null;
  return { role, channel, text };
}

const MAX_HANDOFF_REASON_CHARS = 200;
const handoffReason = (properties: SdkEvent['properties']): string | null =>
  typeof properties?.reason === 'string' ? properties.reason.slice(0, MAX_HANDOFF_REASON_CHARS).toWellFormed() : null;

/** What the agent asked the app to do, on what, and what came of it (docs/reference/voice-agent.md, "Acting on the app"). */
const actionFields = (
  properties: SdkEvent['properties'],
): { action: string | null; target: string | null; outcome: string | null } => {
  const text = (value: unknown, max: number) => (typeof value === 'string' ? value.slice(0, max).toWellFormed() : null);
  return {
    action: text(properties?.action, 32),
    target: text(properties?.target, 256),
    outcome: text(properties?.outcome, 16),
  };
};

/** Who joined which call (the service's own event, docs/explanation/handoff.md): the call record reads them. */
const operatorFields = (properties: SdkEvent['properties']): { operator: string | null; call_id: string | null } => ({
  operator: typeof properties?.operator === 'string' ? properties.operator.slice(0, 64).toWellFormed() : null,
  call_id: typeof properties?.call_id === 'string' ? properties.call_id.slice(0, 128) : null,
});

/** The error codes an event's activity item lists, and how long each may be there (the session keeps them whole). */
const MAX_LOGGED_CODES = 10;
const MAX_LOGGED_CODE_CHARS = 64;

export function eventActivityPayload(
  stored: SdkEvent,
  warnings: string[],
  channel?: IngestChannel,
): Record<string, unknown> {
  const payload: Record<string, unknown> = {
    event: stored.event,
    screen: stored.screen ?? stored.screen_id ?? null,
    component_id: stored.component_id ?? null,
  };
  if (present(stored.hint)) {
    payload.hint = stored.hint;
    payload.masked = stored.masked ?? false;
  }
  if (present(stored.errors)) {
    // An item is kept in the log up to ACTIVITY_RETENTION_ITEMS times over: a hundred 256-character
    // codes made one 27 KB, so the log on disk had no bound a client could not reach (docs/reference/limits.md).
    payload.errors = stored.errors
      .slice(0, MAX_LOGGED_CODES)
      .map((code) =>
        code.length > MAX_LOGGED_CODE_CHARS ? `${code.slice(0, MAX_LOGGED_CODE_CHARS - 1).toWellFormed()}…` : code,
      );
    if (stored.errors.length > MAX_LOGGED_CODES) payload.errors_total = stored.errors.length;
  }
  if (present(stored.failure_reason_code)) payload.failure_reason_code = stored.failure_reason_code;
  if (stored.event === 'voice_conversation_turn') Object.assign(payload, turnFields(stored.properties));
  else if (stored.event === 'handoff_requested') payload.reason = handoffReason(stored.properties);
  else if (stored.event === OPERATOR_JOINED) Object.assign(payload, operatorFields(stored.properties));
  else if (stored.event === 'agent_action') Object.assign(payload, actionFields(stored.properties));
  if (warnings.length > 0) payload.warnings = warnings;
  // An operator seeing one failure listed twice can tell the SDK's fast copy from its durable one.
  if (channel === 'control_plane') payload.channel = channel;
  return payload;
}
