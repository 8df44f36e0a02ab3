import { z } from 'zod';
import { KbGeneralSchema, KbStepSchema } from '../../domain/kyc-knowledge.js';
import { RefreshPolicySchema } from '../../domain/refresh-policy.js';
import { SdkConsent } from '../../domain/sdk-config.js';
import { ComponentHintOut, ValidationFailureOut } from './session.schema.js';

/** What the agent may say of itself on a fetch (docs/decisions/0032-an-agent-joins-or-the-call-ends.md). */
export const ContextQuery = z.object({
  dispatch_id: z
    .string({ error: 'must be a single value' })
    .regex(/^[A-Za-z0-9_-]{1,128}$/, { error: 'must be 1 to 128 letters, digits, _ or -: a dispatch id' })
    .optional()
    .meta({
      description:
        'the agent dispatch the fetching agent came by; a fetch naming a dispatch the call has replaced is not taken as its agent joining',
    }),
});

export const KycKbOut = z
  .object({
    version: z.string(),
    general: KbGeneralSchema,
    step_id: z
      .string()
      .nullable()
      .meta({ description: 'the workflow step the current screen maps to; null when unknown' }),
    step: KbStepSchema.nullable().meta({ description: "the current step's section; null for an unknown step" }),
  })
  .meta({ id: 'KycKnowledge' });

export const ContextOut = z
  .object({
    session_id: z.string(),
    current_screen: z
      .string()
      .nullable()
      .meta({ description: 'the last screen the app sent (same as context.screen)' }),
    context: z.object({
      screen: z.string().nullable(),
      latest_event: z.record(z.string(), z.unknown()).nullable().meta({
        description:
          'the latest event as stored: identity values masked in every field, their shapes under redacted_fields',
      }),
      last_validation_failure: ValidationFailureOut.nullable(),
      component_hints: z.array(ComponentHintOut),
      retry_counts: z.record(z.string(), z.int()).meta({
        description:
          "validation failures per field (component_id) in this session: each field's retry count; a field that never failed is absent",
      }),
      kyc_kb: KycKbOut,
      screen_schema: z
        .record(z.string(), z.unknown())
        .nullable()
        .meta({ description: 'the schema registered for the current screen, if any' }),
      voice_active: z.boolean(),
      refresh_policy: RefreshPolicySchema,
      flow: z
        .object({
          flow_key: z.string(),
          total_steps: z.int(),
          progress: z.object({ position: z.int(), total: z.int(), percent: z.int() }).nullable(),
        })
        .nullable()
        .meta({ description: 'the flow registered with POST /v1/flows/set and the place of the current screen in it' }),
      consent: SdkConsent.nullable().meta({
        description:
          "the tenant's consent notice (SDK config `consent`): the agent gives it first, in the " +
          "user's language, and records the answer with POST /v1/assistant/consent",
      }),
    }),
    system_prompt: z
      .string()
      .meta({ description: 'at most 6,000 characters; client strings quoted, values never included' }),
  })
  .meta({ id: 'AgentContext' });

export type ContextView = z.infer<typeof ContextOut>;
