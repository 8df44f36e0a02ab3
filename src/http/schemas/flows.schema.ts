import { z } from 'zod';
import { MAX_FLOW_STEPS } from '../../domain/flow.js';
import { SessionId, optionalText, traceFields, text } from '../../domain/sdk-event.js';

export const FlowSetIn = z
  .looseObject({
    flow_key: text(128).min(1, { error: 'must not be empty' }),
    step_sequence: z
      .array(text(256).min(1, { error: 'must not be empty' }), { error: 'must be an array of step ids' })
      .max(MAX_FLOW_STEPS, { error: `must hold at most ${MAX_FLOW_STEPS} steps` })
      .nullish()
      .meta({
        description:
          'step ids in order; [] forgets the flow (clearFlow); absent keeps the steps held for the same flow_key',
      }),
    current_step: optionalText(256).meta({ description: 'moves the session to this screen' }),
    session_id: SessionId.nullish().meta({
      description: 'absent: the flow is answered from the knowledge base alone and kept nowhere',
    }),
    user_id: optionalText(256),
    client_id: optionalText(256),
    ...traceFields,
  })
  .meta({ id: 'FlowSetIn' });

export const FlowSetOut = z
  .object({
    status: z.literal('ok'),
    session_id: z.string().nullable(),
    flow_key: z.string().nullable().meta({ description: 'null after the flow was cleared' }),
    business_step: z.string().nullable().meta({ description: 'from the knowledge base for the current step' }),
    validation_intent: z.string().nullable().meta({ description: 'from the knowledge base for the current step' }),
    progress: z
      .object({ position: z.int().meta({ description: '1-based' }), total: z.int(), percent: z.int() })
      .nullable()
      .meta({ description: 'null when the current screen is not a step of the flow' }),
  })
  .meta({ id: 'FlowSetOut' });
