import { z } from 'zod';
import { POPUP_HOLD_REASONS, POPUP_SHOW_REASONS } from '../../domain/popup.js';
import { SessionId, optionalText, traceFields } from '../../domain/sdk-event.js';
import { TriggerEvaluateOut, TriggerSignalsIn } from './trigger.schema.js';

/** The popup request body is not visible in the field clients: the trigger request's fields, all but session_id optional. */
export const PopupEvaluateIn = z
  .looseObject({
    session_id: SessionId.meta({ description: 'the session whose state decides' }),
    user_id: optionalText(256),
    client_id: optionalText(256),
    screen: optionalText(256).meta({ description: 'the current screen, when signals.screen is absent' }),
    signals: TriggerSignalsIn.optional(),
    ...traceFields,
  })
  .meta({ id: 'PopupEvaluateIn' });

export type PopupEvaluateBody = z.infer<typeof PopupEvaluateIn>;

export const PopupOut = z
  .object({
    show: z.boolean(),
    message: z.string().nullable().meta({ description: 'from the knowledge base for the step; null when not shown' }),
    popup_reason_code: z.enum([...POPUP_SHOW_REASONS, ...POPUP_HOLD_REASONS]),
    delay_ms: z.int(),
    retry_after_seconds: z
      .int()
      .optional()
      .meta({ description: 'with reason cooldown: seconds until a popup may show again' }),
  })
  .meta({ id: 'DynamicPopup' });

export const AssistantEvaluateOut = z
  .object({ session_id: z.string(), trigger: TriggerEvaluateOut, popup: PopupOut })
  .meta({ id: 'AssistantEvaluateOut' });
