import { z } from 'zod';
import { ACTIVITY_KINDS } from '../../domain/activity.js';
import { pageLimit } from './params.schema.js';

export const MAX_ACTIVITY_PAGE = 1000;

export const ErrorBody = z.object({ detail: z.string() }).meta({ id: 'Error' });

/** What a route keyed by the path's session id answers when the id is not one or names no live session. */
export const sessionPathErrors = (notFound = 'no such live session') => ({
  404: { description: notFound, schema: ErrorBody },
  422: { description: 'session_id is not a valid id', schema: ErrorBody },
});

export const StoreHealthOut = z
  .object({
    kind: z.enum(['memory', 'sqlite']),
    status: z
      .enum(['ok', 'failing'])
      .meta({ description: '`failing`: the last commit failed (disk full, I/O error); writes answer 503' }),
    file: z.string().optional().meta({
      description:
        "the database file (sqlite); only to a request carrying one of API_KEY's keys, since the probes answer anyone",
    }),
    last_error: z.string().optional(),
  })
  .meta({ id: 'StoreHealth' });

export const Health = z
  .object({
    status: z.string(),
    store: StoreHealthOut.optional(),
    memory: z
      .object({
        budget_bytes: z.int().meta({ description: "sessions' share of MEMORY_BUDGET_MB" }),
        used_bytes: z.int().meta({ description: 'estimated memory of every session held, running or hibernated' }),
        sessions: z.int(),
      })
      .optional(),
    connections: z
      .object({ http: z.int(), sse: z.int(), websocket: z.int() })
      .optional()
      .meta({ description: 'open connections by kind' }),
    cluster: z
      .object({
        restate: z.object({ ingress: z.enum(['ok', 'unreachable']), admin: z.enum(['ok', 'unreachable']) }),
        redis: z.enum(['ok', 'failing']),
        redis_answers: z.boolean().meta({
          description:
            'whether Redis answered a PING within 1 s just now, on a connection that is up: /health/ready is 503 `redis_unreachable` while it does not',
        }),
      })
      .optional()
      .meta({
        description:
          'SESSION_HOST=restate only: whether the Restate ingress and admin API answer and the Redis activity log takes writes',
      }),
  })
  .meta({ id: 'Health' });

export const FeatureFlagsOut = z.object({ flags: z.record(z.string(), z.boolean()) }).meta({ id: 'FeatureFlags' });

export const EventOut = z
  .object({
    status: z.literal('ok'),
    ingested_at: z.int().meta({
      description:
        'Unix time (seconds) of the event: when the session applied it (SESSION_HOST=embedded), or ' +
        'when the service took it (SESSION_HOST=restate: the session applies it at that time, or at ' +
        'its own latest activity when that is later)',
    }),
    warnings: z
      .array(z.string())
      .optional()
      .meta({
        description:
          '`unknown_event_type` for event types this version does not know; `session_budget_exceeded` ' +
          'when older data gave way to SESSION_MAX_BYTES, only with SESSION_HOST=embedded: with ' +
          'SESSION_HOST=restate the answer comes before the session runs the event. Either way the ' +
          "event's activity item (kind `event`, `payload.warnings`) carries both",
      }),
  })
  .meta({ id: 'EventOut' });

export const ActivityItemOut = z
  .object({
    id: z.string().meta({ description: 'monotonic integer, as a string' }),
    kind: z.enum(ACTIVITY_KINDS),
    timestamp: z.string().meta({
      format: 'date-time',
      description: 'when the item was recorded; never earlier than the item before it (by id)',
    }),
    due_at: z
      .string()
      .optional()
      .meta({
        format: 'date-time',
        description:
          'only on an item a timer recorded (a `reengagement` with `payload.source` `timer`, a call ' +
          'ended by its silence check): when the timer was due. Earlier than `timestamp` when it ' +
          "fired late (the process was down or busy); the item's decision is taken as of then",
      }),
    session_id: z.string().nullable().meta({ description: 'null for a trigger evaluation that named no session' }),
    user_id: z.string().nullable(),
    payload: z.record(z.string(), z.unknown()),
    trace: z.object({ trace_id: z.string(), request_id: z.string() }),
  })
  .meta({ id: 'ActivityItem' });

export const ActivityListOut = z
  .object({
    items: z.array(ActivityItemOut),
    session_id: z
      .string()
      .nullable()
      .meta({
        description:
          'the session key the session_id filter was read as: the id itself, or its digest (h-…) for ' +
          'an id that reads as an identity value, as the items carry it; null without the filter',
      }),
    media_ready: z.boolean(),
    feature_flags: z.record(z.string(), z.boolean()),
  })
  .meta({ id: 'ActivityList' });

export const ActivityQuery = z.object({
  limit: pageLimit(MAX_ACTIVITY_PAGE).optional().meta({ description: 'default 100, at most 1000' }),
  session_id: z.string({ error: 'must be a single value' }).optional(),
  kind: z.enum(ACTIVITY_KINDS, { error: `must be one of ${ACTIVITY_KINDS.join(', ')}` }).optional(),
});
