import { z } from 'zod';
import { CURSOR_PATTERN, SESSION_SORTS } from '../../actor-system/session-listing.js';
import { pageLimit } from './params.schema.js';

export const MAX_SESSION_PAGE = 500;

const filterText = (name: string) =>
  z.string({ error: 'must be a single value' }).max(200, { error: `${name} must be at most 200 characters` });

export const SessionListQueryIn = z.object({
  limit: pageLimit(MAX_SESSION_PAGE).optional().meta({ description: 'page size, 1 to 500 (default 50)' }),
  cursor: z
    .string({ error: 'must be a single value' })
    .regex(CURSOR_PATTERN, { error: "must be a page's next_cursor: a time in ms, '~', a session id" })
    .optional()
    .meta({
      description:
        "the previous page's next_cursor; any cursor of this form names a position, and the page continues after it",
    }),
  voice: z
    .enum(['active', 'inactive'], { error: 'must be active or inactive' })
    .optional()
    .meta({ description: 'active: starting, active or stopping' }),
  screen: filterText('screen').optional().meta({ description: 'exact screen, case-insensitive' }),
  q: filterText('q').optional().meta({ description: 'case-insensitive text in the session id, user id or screen' }),
  sort: z
    .enum(SESSION_SORTS, { error: `must be one of ${SESSION_SORTS.join(', ')}` })
    .optional()
    .meta({ description: 'default last_activity' }),
  order: z.enum(['asc', 'desc'], { error: 'must be asc or desc' }).optional().meta({ description: 'default desc' }),
});

export const SessionSummaryOut = z
  .object({
    session_id: z.string(),
    user_id: z.string().nullable(),
    screen: z.string().nullable(),
    flow: z
      .object({
        flow_key: z.string(),
        current_step: z.string().nullable(),
        position: z.int().nullable(),
        total: z.int(),
        percent: z.int().nullable(),
      })
      .nullable()
      .meta({ description: 'progress through the flow set by the SDK; null when none' }),
    voice: z.string().meta({ description: 'inactive, starting, active or stopping' }),
    cooldown_remaining_ms: z.int().meta({ description: 'until the trigger may fire again; 0 when not cooling down' }),
    last_activity_at: z.string().meta({ format: 'date-time', description: 'when a command last reached the session' }),
    status: z.enum(['running', 'hibernated']),
  })
  .meta({ id: 'SessionSummary' });

export const SessionListOut = z
  .object({
    sessions: z.array(SessionSummaryOut),
    next_cursor: z.string().nullable().meta({ description: 'pass as cursor for the next page; null on the last page' }),
    total: z.int().meta({ description: 'sessions matching the filters, over all pages' }),
  })
  .meta({ id: 'SessionList' });

export type SessionListView = z.infer<typeof SessionListOut>;
