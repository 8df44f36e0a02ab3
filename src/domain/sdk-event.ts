import { z } from 'zod';

/** Error text for a wrong or missing type: a missing field is "required", not "must be a string". */
export const mustBe = (what: string) => ({
  error: (issue: { input?: unknown }) => (issue.input === undefined ? 'is required' : `must be ${what}`),
});

/** The longest hint accepted: one field's value, with room to spare. */
export const MAX_HINT_CHARS = 1024;

export const SESSION_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

export const SessionId = z
  .string(mustBe('a string'))
  .regex(SESSION_ID_PATTERN, { error: 'must be 1-128 characters of A-Za-z0-9._:-' })
  .meta({ example: '7664f88e-4980-41c3-bec0-f0e1591ee548' });

export const text = (max: number) =>
  z.string(mustBe('a string')).max(max, { error: `must be at most ${max} characters` });
export const optionalText = (max: number) => text(max).nullish();

/** Correlation fields any SDK body may carry (docs/decisions/0008-activity-items-and-the-stream.md). */
export const traceFields = {
  traceparent: optionalText(256),
  trace_id: optionalText(128),
  request_id: optionalText(128),
};

/**
 * What an SDK posts to /v1/events (docs/reference/events.md, docs/decisions/0001-identity-values-masked-on-arrival.md). Only session_id and event are
 * required; unknown fields are kept (a newer SDK must never lose data against this backend).
 * Deployed SDKs sometimes send null for an absent optional field, so null is accepted too.
 */
/**
 * The event the service records when an operator joins a call (docs/explanation/handoff.md): it takes the call
 * out of the queue of those waiting for a person, so no client may send it (EventInSchema refuses it).
 */
export const OPERATOR_JOINED = 'operator_joined';

/** The voice agent's word that nobody joined in HANDOFF_TIMEOUT_SECONDS after a person was asked for: a call back is owed (docs/explanation/handoff.md). */
export const HANDOFF_UNANSWERED = 'handoff_unanswered';

export const EventInSchema = z
  .looseObject({
    session_id: SessionId,
    event: text(64)
      .min(1, { error: 'must not be empty' })
      .refine((event) => event !== OPERATOR_JOINED, {
        error: `${OPERATOR_JOINED} is recorded by the service when an operator joins a call; a client cannot send it`,
      }),
    user_id: optionalText(256),
    timestamp: z
      .int({ error: 'must be an integer (Unix seconds)' })
      .nonnegative({ error: 'must not be negative' })
      .nullish(),
    screen: optionalText(256),
    screen_id: optionalText(256),
    errors: z
      .array(text(256), { error: 'must be an array of strings' })
      .max(100, { error: 'must hold at most 100 codes' })
      .nullish(),
    failure_reason_code: optionalText(256),
    component_id: optionalText(256),
    component_type: optionalText(64),
    hint: optionalText(MAX_HINT_CHARS),
    masked: z.boolean({ error: 'must be a boolean' }).nullish(),
    client_id: optionalText(256),
    mapping_version: optionalText(64),
    traceparent: optionalText(256),
    trace_id: optionalText(128),
    request_id: optionalText(128),
    properties: z.record(z.string(), z.unknown(), { error: 'must be an object' }).nullish(),
  })
  .meta({ id: 'EventIn' });

export type SdkEvent = z.infer<typeof EventInSchema>;

/** Event types of docs/reference/events.md; anything else is accepted and answered with a warning. */
export const KNOWN_EVENT_TYPES = new Set([
  'identity',
  'screen_schema',
  'screen_schema_lazy',
  'component_input',
  'validation_failed',
  'error_reported',
  'voice_conversation_turn',
  'handoff_requested',
  HANDOFF_UNANSWERED,
  OPERATOR_JOINED,
  'agent_action',
]);

/** Events the user did not make (the voice agent's turns, actions on the app and word of a handoff nobody took, an operator joining); they must not count as the user being active. */
export const AGENT_EVENT_TYPES = new Set([
  'voice_conversation_turn',
  OPERATOR_JOINED,
  'agent_action',
  HANDOFF_UNANSWERED,
]);
