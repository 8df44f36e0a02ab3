import { z } from 'zod';
import { ActivityItemOut, ActivityQuery } from './common.js';

export const ActivityStreamQuery = ActivityQuery.pick({ session_id: true, kind: true });

export const ActivityStreamHeaders = z.object({
  'Last-Event-ID': z
    .string()
    .regex(/^\d{1,16}$/, { error: 'must be a non-negative integer: the id of the last activity item received' })
    .transform(Number)
    .refine(Number.isSafeInteger, { error: 'must be a non-negative integer: the id of the last activity item received' })
    .optional(),
});

export const RESET_REASONS = ['behind_buffer', 'unknown_id'] as const;

export const ActivityStreamReset = z
  .object({
    reason: z.enum(RESET_REASONS).meta({
      description: '`behind_buffer`: items after `requested_after` were overwritten before they could be sent; `unknown_id`: this buffer never gave that id (the service restarted)',
    }),
    requested_after: z.string().nullable().meta({ description: 'the position the stream resumed from; null for `unknown_id` (an id never given may be any number, an identity value included, so it is not repeated)' }),
    oldest_id: z.string().nullable().meta({ description: 'the oldest item still buffered; the replay starts there (null: the buffer is empty)' }),
    latest_id: z.string().meta({ description: 'the newest id given so far ("0" before the first item)' }),
  })
  .meta({ id: 'ActivityStreamReset' });

export type ActivityStreamReset = z.infer<typeof ActivityStreamReset>;

export const ActivityStreamMessage = z
  .union([ActivityItemOut, ActivityStreamReset])
  .meta({ description: 'the data of each message: an ActivityItem in `event: activity` (with `id:` = its id), an ActivityStreamReset in `event: reset`' });
