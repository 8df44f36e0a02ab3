import { z } from 'zod';

const Shape = z.object({
  length: z.int(),
  digits: z.int(),
  letters: z.int(),
  kind: z
    .string()
    .optional()
    .meta({
      description:
        'the identity value it was recognised as: pan, aadhaar, vid, card, phone, email, upi, date, ' +
        'number, gstin, driving_licence, vehicle, voter_id, passport, ifsc, address, name, otp; ' +
        'text under a sensitive key',
    }),
  matches_pattern: z.boolean().optional(),
});

export const ComponentHintOut = z
  .object({
    component_id: z.string(),
    component_type: z.string().nullable(),
    screen: z.string().nullable(),
    hint: z.string().meta({ description: 'masked; never the raw value' }),
    masked: z.boolean(),
    masked_by: z.literal('server').optional(),
    shape: Shape.optional(),
    properties: z.record(z.string(), z.unknown()).optional(),
    updated_at: z.string().meta({ format: 'date-time' }),
  })
  .meta({ id: 'ComponentHint' });

export const ValidationFailureOut = z
  .object({
    screen: z.string().nullable(),
    component_id: z.string().nullable(),
    component_type: z.string().nullable(),
    errors: z.array(z.string()),
    failure_reason_code: z.string().nullable(),
    validation_rule_id: z.string().nullable(),
    expected_pattern: z.string().nullable(),
    hint: z.string().nullable(),
    masked: z.boolean().nullable(),
    masked_by: z.literal('server').optional(),
    shape: Shape.optional(),
    at: z.string().meta({ format: 'date-time' }),
  })
  .meta({ id: 'ValidationFailure' });

export const VoiceDetailsOut = z
  .object({
    room: z.string().nullable(),
    dispatch_id: z.string().nullable().meta({ description: 'the agent dispatch known to be in the room' }),
    started_at: z.string().nullable().meta({ format: 'date-time' }),
    stopped_at: z.string().nullable().meta({ format: 'date-time' }),
  })
  .meta({ id: 'VoiceDetails' });

export const SessionOut = z
  .object({
    session_id: z.string(),
    user_id: z.string().nullable(),
    client_id: z.string().nullable(),
    active: z.boolean(),
    state: z.unknown().meta({ description: "the session machine's current state value" }),
    screen: z.string().nullable(),
    screen_id: z.string().nullable(),
    latest_event: z.record(z.string(), z.unknown()).nullable(),
    last_validation_failure: ValidationFailureOut.nullable(),
    component_hints: z.array(ComponentHintOut),
    retry_counts: z
      .record(z.string(), z.int())
      .meta({ description: 'validation failures per field (component_id) in this session' }),
    schemas: z.array(z.object({ screen_id: z.string(), schema_hash: z.string(), critical: z.boolean() })),
    created_at: z.string().meta({ format: 'date-time' }),
    updated_at: z.string().meta({ format: 'date-time' }),
    last_user_activity_at: z.string().nullable().meta({ format: 'date-time' }),
    last_trigger_at: z
      .string()
      .nullable()
      .meta({ format: 'date-time', description: 'when a trigger last fired in this session' }),
    voice: VoiceDetailsOut,
    assistant_invocation_id: z.string().nullable().meta({ description: 'the voice engagement under way or last run' }),
    flow: z
      .object({ flow_key: z.string(), steps: z.array(z.string()) })
      .nullable()
      .meta({ description: 'registered with POST /v1/flows/set (step ids normalised)' }),
    held_failures: z
      .object({
        screen: z.string(),
        codes: z.array(z.string()),
        restart_at: z.string().nullable().meta({ format: 'date-time' }),
      })
      .meta({
        description:
          'the error window of the current screen as held (expired failures are dropped when next evaluated)',
      }),
    popup_cooldown_until: z.string().nullable().meta({ format: 'date-time' }),
    dropoff: z
      .object({
        registered_at: z.string().meta({ format: 'date-time' }),
        has_dialable_phone: z.boolean(),
        phone_last4: z.string().nullable(),
        reason: z.string().nullable(),
      })
      .nullable(),
  })
  .meta({ id: 'Session' });

export type SessionView = z.infer<typeof SessionOut>;
export type ComponentHintView = z.infer<typeof ComponentHintOut>;
export type ValidationFailureView = z.infer<typeof ValidationFailureOut>;
