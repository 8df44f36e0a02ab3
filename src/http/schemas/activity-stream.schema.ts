import { z } from 'zod';
import { ActivityQuery } from './common.schema.js';

export const ActivityStreamQuery = ActivityQuery.pick({ session_id: true, kind: true });

const LAST_EVENT_ID_FORM = 'must be a non-negative integer: the id of the last activity item received';

export const ActivityStreamHeaders = z.object({
  // Empty is what an EventSource whose last event id was cleared would send: as if not sent.
  'Last-Event-ID': z
    .string()
    .regex(/^(\d{1,16})?$/, { error: LAST_EVENT_ID_FORM })
    .transform((value) => (value === '' ? undefined : Number(value)))
    .refine((value) => value === undefined || Number.isSafeInteger(value), { error: LAST_EVENT_ID_FORM })
    .optional(),
});

export const RESET_REASONS = ['behind_buffer', 'unknown_id'] as const;

export const ActivityStreamReset = z
  .object({
    reason: z.enum(RESET_REASONS).meta({
      description:
        '`behind_buffer`: items after `requested_after` were overwritten before they could be sent; ' +
        '`unknown_id`: this buffer never gave that id (the service restarted)',
    }),
    requested_after: z.string().nullable().meta({
      description:
        'the position the stream resumed from; null for `unknown_id` (an id never given may be any number, an identity value included, so it is not repeated)',
    }),
    oldest_id: z
      .string()
      .nullable()
      .meta({ description: 'the oldest item still buffered; the replay starts there (null: the buffer is empty)' }),
    latest_id: z.string().meta({ description: 'the newest id given so far ("0" before the first item)' }),
  })
  .meta({ id: 'ActivityStreamReset' });

export type ActivityStreamReset = z.infer<typeof ActivityStreamReset>;

/** A message's `data`: JSON text of the named component, as the document declares it for each event. */
/** An SSE message's `data`: JSON text of the named component. */
export const jsonData = (component: string, description: string) =>
  z.string().meta({
    description,
    contentMediaType: 'application/json',
    contentSchema: { $ref: `#/components/schemas/${component}` },
  });

const retry = z.int().min(0).optional().meta({ description: 'reconnection delay (ms), set by the first message' });

/** Each message of the stream as a reader of the wire (the EventSource API, or any SSE parser) hands it over. */
export const ActivityStreamMessage = z
  .union([
    z.object({
      event: z.literal('activity'),
      id: z.string().regex(/^\d+$/).meta({ description: 'the item id; send it back as Last-Event-ID to resume' }),
      data: jsonData('ActivityItem', 'JSON text of an ActivityItem'),
      retry,
    }),
    z.object({
      event: z.literal('reset'),
      id: z
        .string()
        .regex(/^\d+$/)
        .optional()
        .meta({ description: 'none of its own: a reader hands over the id of the last activity before it, if any' }),
      data: jsonData('ActivityStreamReset', 'JSON text of an ActivityStreamReset'),
      retry,
    }),
  ])
  .meta({
    description:
      'each message of the stream: `event: activity` (with `id:` = the item id) or `event: ' +
      'reset`, its data JSON text of an ActivityItem or an ActivityStreamReset',
  });
