import { z } from 'zod';
import { SessionId, mustBe } from '../../domain/sdk-event.js';
import { WEBHOOK_TYPES } from '../../domain/webhook-message.js';
import { ENDED_BY } from '../../domain/call-record.js';
import { pageLimit } from './params.schema.js';

const optionalTrace = (max: number) =>
  z
    .string(mustBe('a string'))
    .max(max, { error: `must be at most ${max} characters` })
    .nullish();

export const ConsentIn = z
  .object({
    session_id: SessionId,
    decision: z.enum(['given', 'refused', 'withdrawn'], { error: 'must be one of given, refused, withdrawn' }),
    notice_version: z
      .string(mustBe('a string'))
      .regex(/^[A-Za-z0-9._:-]{1,64}$/, { error: 'must be 1-64 characters of A-Za-z0-9._:-' })
      .meta({ description: 'the version of the notice the user was given (SDK config `consent.notice_version`)' }),
    language: z
      .string(mustBe('a string'))
      .regex(/^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$/, { error: 'must be a language tag such as en, hi or ta-IN' })
      .meta({ description: 'the language the notice was given in (BCP 47)' }),
    traceparent: optionalTrace(256),
    trace_id: optionalTrace(128),
    request_id: optionalTrace(128),
  })
  .meta({ id: 'ConsentIn' });
export type ConsentBody = z.infer<typeof ConsentIn>;

export const ConsentOut = z
  .object({
    session_id: z.string(),
    decision: z.enum(['given', 'refused', 'withdrawn']),
    notice_version: z.string(),
    language: z.string(),
    recorded_at: z.string().meta({ description: 'ISO 8601' }),
  })
  .meta({ id: 'ConsentOut' });

const CallPlaceOut = z
  .object({
    screen: z.string().nullable(),
    step: z
      .string()
      .nullable()
      .meta({ description: 'the screen as a step id: trimmed, lower case, legacy n_/new_ prefix dropped' }),
    errors: z.array(z.string()).meta({ description: 'the error codes held for that step' }),
  })
  .meta({ id: 'CallPlace' });

const CallTurnOut = z
  .object({
    role: z.enum(['user', 'agent']),
    channel: z.enum(['voice', 'chat']),
    text: z.string().meta({ description: 'as the privacy rule left it: identity values masked' }),
    at: z.string().meta({ description: 'ISO 8601' }),
    screen: z.string().nullable(),
  })
  .meta({ id: 'CallTurn' });

export const CallReportOut = z
  .object({
    duration_ms: z.int(),
    turns: z.object({ user: z.int(), agent: z.int() }),
    outcome: z.enum(['resolved', 'handoff', 'abandoned', 'unresolved']),
    step: z.string().nullable().meta({ description: 'the step the call began on' }),
    reason: z
      .enum(['moved_past_step', 'moved_past_step_after_call', 'handoff_requested', 'no_user_turn', 'still_on_step'])
      .meta({
        description:
          '`moved_past_step_after_call`: the user moved past the step within CALL_RESOLVE_WINDOW_MINUTES after the call ended',
      }),
    summary: z.string(),
    summary_source: z.enum(['record', 'model']),
    outcome_open_until: z
      .string()
      .nullable()
      .meta({
        description:
          'ISO 8601: until when an unresolved or abandoned outcome may still become resolved (the ' +
          'user moving past the step after the call, CALL_RESOLVE_WINDOW_MINUTES); null when it can ' +
          'no longer change',
      }),
    resolved_at: z
      .string()
      .nullable()
      .meta({ description: 'ISO 8601: when the user moved past the step after the call; null otherwise' }),
  })
  .meta({ id: 'CallReport' });

const CallHandoffOut = z
  .object({
    at: z.string().meta({ description: 'when a person was asked for' }),
    reason: z.string().nullable(),
    screen: z.string().nullable().meta({ description: 'the screen the request was made on' }),
    joined: z
      .object({ at: z.string(), operator: z.string() })
      .nullable()
      .meta({ description: 'the operator who joined, and when; null while the user waits' }),
    unanswered_at: z.string().nullable().meta({
      description:
        'when the agent said nobody from the team was free: a call back is owed (`handoff.unanswered`); null otherwise',
    }),
  })
  .meta({ id: 'CallHandoff' });

export const CallOut = z
  .object({
    call_id: z.string().meta({ description: 'the assistant_invocation_id of the start that began it' }),
    session_id: z.string(),
    user_id: z.string().nullable(),
    started_at: z.string(),
    ended_at: z.string().nullable().meta({ description: 'null while the call runs' }),
    ended_by: z.enum(ENDED_BY).nullable(),
    start: CallPlaceOut,
    end: CallPlaceOut.nullable(),
    context_versions: z
      .array(z.string())
      .meta({ description: 'the versions of the agent context read during the call, first read first' }),
    turns: z
      .object({ user: z.int(), agent: z.int() })
      .meta({ description: 'turns said, whether their words were kept or not' }),
    transcript_kept: z.boolean().meta({ description: 'consent given and not withdrawn: only then are the words kept' }),
    handoff: CallHandoffOut.nullable().meta({
      description: 'a person was asked for during the call (docs/explanation/handoff.md)',
    }),
    report: CallReportOut.nullable().meta({ description: 'written when the call ends' }),
    transcript: z.array(CallTurnOut),
  })
  .meta({ id: 'Call' });

export const CallListOut = z.object({ session_id: z.string(), calls: z.array(CallOut) }).meta({ id: 'CallList' });

export const HandoffListOut = z
  .object({
    handoffs: z
      .array(CallOut)
      .meta({ description: 'running calls whose user waits for a person, longest waiting first' }),
  })
  .meta({ id: 'HandoffList' });

export const OperatorJoinIn = z
  .object({
    operator: z
      .string(mustBe('a string'))
      .trim()
      .min(1, { error: 'must not be empty' })
      .max(64, { error: 'must be at most 64 characters' })
      .meta({ description: "the operator's name or handle, kept in the call's record", example: 'Meera (support)' }),
  })
  .meta({ id: 'OperatorJoinIn' });

export const OperatorJoinOut = z
  .object({
    call_id: z.string(),
    session_id: z.string(),
    room: z.string().meta({ description: "the call's LiveKit room" }),
    identity: z.string().meta({
      description: 'the participant identity the token is for (operator-…): the agent knows an operator by it',
    }),
    token: z
      .string()
      .meta({ description: 'a LiveKit participant token for the room: publish and subscribe, no agent dispatch' }),
    media_url: z.string(),
    expires_in_sec: z.int(),
  })
  .meta({ id: 'OperatorJoin' });

export const MAX_CALL_PAGE = 100;
export const CallListQueryIn = z.object({ limit: pageLimit(MAX_CALL_PAGE).optional() });

export const DeliveryOut = z
  .object({
    id: z.int(),
    message_id: z
      .string()
      .meta({ description: 'the webhook-id header: the same for every address and attempt of one message' }),
    type: z.enum(WEBHOOK_TYPES),
    url: z.string(),
    status: z
      .enum(['held', 'pending', 'delivered', 'failed'])
      .meta({ description: '`held`: a call.ended waiting for the summary the language model writes' }),
    attempts: z.int(),
    created_at: z.string(),
    next_attempt_at: z.string().nullable(),
    last_attempt_at: z.string().nullable(),
    last_status: z.int().nullable().meta({ description: 'the HTTP status of the last attempt; null when none came' }),
    last_error: z.string().nullable(),
  })
  .meta({ id: 'WebhookDelivery' });

export const MAX_DELIVERY_PAGE = 200;
export const DeliveryListQueryIn = z.object({
  status: z
    .enum(['held', 'pending', 'delivered', 'failed'], { error: 'must be one of held, pending, delivered, failed' })
    .optional(),
  limit: pageLimit(MAX_DELIVERY_PAGE).optional(),
});
export const DeliveryListOut = z.object({ deliveries: z.array(DeliveryOut) }).meta({ id: 'WebhookDeliveryList' });

export const ErasureOut = z
  .object({
    erasure_id: z.string(),
    erased_at: z.string(),
    removed: z.object({
      sessions: z.int(),
      calls: z.int(),
      transcript_turns: z.int(),
      consent_records: z.int(),
      activity_items: z.int(),
      webhook_deliveries: z.int(),
    }),
  })
  .meta({ id: 'Erasure' });

export const USER_ID_PATTERN = /^[^\s/]{1,256}$/;
export const UserParams = z.object({
  user_id: z.string().regex(USER_ID_PATTERN, { error: 'must be 1-256 characters, no spaces or slashes' }),
});
export const DeliveryParams = z.object({
  id: z
    .string()
    .regex(/^\d{1,15}$/, { error: 'must be a delivery id (an integer)' })
    .transform(Number),
});
export const CallParams = z.object({
  call_id: z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, { error: 'must be 1-128 characters of A-Za-z0-9._:-' }),
});
