import { z } from 'zod';
import { SessionId, optionalText, traceFields } from '../../domain/sdk-event.js';

export const DropoffRegisterIn = z
  .looseObject({
    session_id: SessionId,
    user_id: optionalText(256),
    phone: optionalText(32).meta({
      description: 'never stored: only whether it is dialable and its last 4 digits are kept',
    }),
    reason: optionalText(64).meta({ example: 'app_backgrounded' }),
    ...traceFields,
  })
  .meta({ id: 'DropoffRegisterIn' });

export const DropoffCancelIn = z
  .looseObject({
    session_id: SessionId,
    user_id: optionalText(256),
    ...traceFields,
  })
  .meta({ id: 'DropoffCancelIn' });

export const DropoffRegisterOut = z
  .object({
    status: z.literal('registered'),
    session_id: z.string(),
    has_dialable_phone: z.boolean().meta({ description: 'reengagement then recommends channel phone' }),
  })
  .meta({ id: 'DropoffRegisterOut' });

export const DropoffCancelOut = z
  .object({
    status: z.literal('cancelled'),
    session_id: z.string(),
    was_registered: z.boolean(),
  })
  .meta({ id: 'DropoffCancelOut' });
