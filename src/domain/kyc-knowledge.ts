import { z } from 'zod';
import { normaliseStepId } from './step-id.js';

/**
 * The KYC knowledge base the voice agent is given: general guidance for the whole journey and
 * one section per workflow step. It is operator-written data (a JSON file), validated strictly at
 * start so a typo in a field name is a start-up error, not guidance silently missing.
 */
const text = (max: number) =>
  z
    .string()
    .trim()
    .min(1, { error: 'must not be empty' })
    .max(max, { error: `must be at most ${max} characters` });
const list = (max: number, itemMax: number) =>
  z.array(text(itemMax)).max(max, { error: `must have at most ${max} entries` });

/** Step ids and failure codes are keys the backend matches, so they have one spelling: lower snake case. */
export const KB_KEY = /^[a-z0-9_]{1,64}$/;
const key = z.string().regex(KB_KEY, { error: 'keys must be 1-64 characters of a-z, 0-9 and _' });

export const KbFailureSchema = z
  .strictObject({
    meaning: text(400).meta({ description: 'what the failure code means, in words a user understands' }),
    recovery: text(600).meta({ description: 'how the user recovers' }),
  })
  .meta({ id: 'KbFailure' });

export const KbStepSchema = z
  .strictObject({
    title: text(80),
    purpose: text(500).meta({ description: 'what the step is for' }),
    guidance: list(8, 300).default([]).meta({ description: 'how to help on this step' }),
    failures: z.record(key, KbFailureSchema).default({}).meta({ description: 'failure code → meaning and recovery' }),
    never_ask_for: list(10, 160)
      .default([])
      .meta({ description: 'what the assistant must never ask for on this step' }),
    business_step: key
      .optional()
      .meta({ description: 'the business stage this step belongs to, answered by POST /v1/flows/set' }),
    validation_intent: key.optional().meta({ description: 'what the step verifies, answered by POST /v1/flows/set' }),
  })
  .meta({ id: 'KbStep' });

export const KbGeneralSchema = z
  .strictObject({
    role: text(600).meta({ description: "the assistant's role, one paragraph" }),
    journey: z.array(key).min(1).max(40).meta({ description: 'step ids in workflow order' }),
    rules: list(12, 300).min(1),
    never_ask_for: list(16, 160).min(1).meta({ description: 'what the assistant must never ask for, on any step' }),
    common_failures: z
      .record(key, KbFailureSchema)
      .default({})
      .meta({ description: 'failure codes any step may report' }),
    when_stuck: text(500).meta({ description: 'what to suggest when nothing else helps' }),
  })
  .meta({ id: 'KbGeneral' });

export const KnowledgeBaseSchema = z
  .strictObject({
    version: text(64),
    general: KbGeneralSchema,
    steps: z.record(key, KbStepSchema),
  })
  .superRefine((kb, ctx) => {
    kb.general.journey.forEach((step, index) => {
      if (!kb.steps[step])
        ctx.addIssue({
          code: 'custom',
          path: ['general', 'journey', index],
          message: `names step ${step}, which has no section in steps`,
        });
    });
  });

export type KnowledgeBase = z.output<typeof KnowledgeBaseSchema>;
export type KbStep = z.output<typeof KbStepSchema>;
export type KbGeneral = z.output<typeof KbGeneralSchema>;
export type KbFailure = z.output<typeof KbFailureSchema>;

/** What the agent is given: the general part and the current step's section, never the whole file. */
export interface KbSelection {
  version: string;
  general: KbGeneral;
  step_id: string | null;
  step: KbStep | null;
}

/**
 * The step a client screen id stands for. Case-insensitive; a legacy `n_`/`new_` prefix is
 * dropped only when the id is not a step itself and the rest is, so a step really named
 * `new_…` keeps working.
 */
export function stepIdFor(kb: KnowledgeBase, screen: string | null | undefined): string | undefined {
  if (!screen) return undefined;
  const id = normaliseStepId(screen, (candidate) => Object.hasOwn(kb.steps, candidate));
  return Object.hasOwn(kb.steps, id) ? id : undefined;
}

export function selectKnowledge(kb: KnowledgeBase, screen: string | null | undefined): KbSelection {
  const stepId = stepIdFor(kb, screen);
  return { version: kb.version, general: kb.general, step_id: stepId ?? null, step: stepId ? kb.steps[stepId]! : null };
}

/**
 * Guidance for a failure code: the step it happened on first, then the codes any step may report,
 * then any other step (a code such as `otp_incomplete` is shared by steps).
 */
export function failureGuidance(kb: KnowledgeBase, stepId: string | undefined, code: string): KbFailure | undefined {
  const wanted = code.trim().toLowerCase();
  if (!KB_KEY.test(wanted)) return undefined;
  const own = stepId ? kb.steps[stepId]?.failures : undefined;
  if (own && Object.hasOwn(own, wanted)) return own[wanted];
  if (Object.hasOwn(kb.general.common_failures, wanted)) return kb.general.common_failures[wanted];
  for (const step of Object.values(kb.steps)) {
    if (Object.hasOwn(step.failures, wanted)) return step.failures[wanted];
  }
  return undefined;
}
