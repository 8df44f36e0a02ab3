/**
 * The session record: what a session knows of its user's journey (the latest event, hints of what
 * was typed, validation failures, screen schemas), as plain data, and a new one. What an event
 * does to it is session-event.ts; its parts have modules of their own (component-hints.ts,
 * session-schemas.ts, session-budget.ts).
 */
import type { HintShape } from '../privacy/hints.js';
import type { RegisteredSchema } from './screen-schema.js';

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
  /**
   * What the heap spends per byte of `held_bytes`, from the most nested event the session took
   * (its objects, arrays and keys cost more than their text: `heldDensity`). Absent while no
   * event passed the memory budget's usual factor of 2, as in sessions stored before it.
   */
  held_density?: number;
  /**
   * When the voice agent said nobody from the team was free after the user asked for a person
   * (`handoff_unanswered`, docs/explanation/handoff.md): someone owes the user a call back, which the
   * reengagement rule recommends at once after the call. Cleared by an operator joining. Absent
   * in sessions stored before it, and in every session that never waited in vain.
   */
  callback_owed_at?: number | null;
}

/**
 * Empty collections shared by every new session (most sessions never fill some of them): updates
 * always build new ones, and freezing makes a stray mutation throw instead of leaking across sessions.
 */
const NO_HINTS: ComponentHint[] = Object.freeze([]) as unknown as ComponentHint[];
const NO_SCHEMAS: Record<string, RegisteredSchema> = Object.freeze({});
const NO_RETRIES: Record<string, number> = Object.freeze(Object.create(null) as Record<string, number>);

/** The session's count of validation failures per field; none for a session stored before counts were kept. */
export const retryCounts = (record: Pick<SessionRecord, 'retry_counts'>): Record<string, number> =>
  record.retry_counts ?? NO_RETRIES;

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
