import { z } from 'zod';
import { SessionId, mustBe } from '../../domain/sdk-event.js';

/** Optional text where blank means "not known": clients with nothing to say send "" as often as null. */
const knownText = (max: number) =>
  z
    .string(mustBe('a string'))
    .max(max, { error: `must be at most ${max} characters` })
    .nullish()
    .transform((value) => (value === null || value === undefined || value.trim() === '' ? null : value));

const traceFields = {
  traceparent: knownText(256),
  trace_id: knownText(128),
  request_id: knownText(128),
};

export const AssistantStartIn = z
  .object({
    session_id: SessionId,
    user_id: knownText(256).meta({ description: 'becomes the token identity (`sub`); default `user-{session_id}`' }),
    screen: knownText(256).meta({ description: 'updates the session screen' }),
    ...traceFields,
  })
  .meta({ id: 'AssistantStartIn' });

const warnings = z.array(z.string()).meta({
  description:
    'what degraded: missing_screen_context, media_not_configured, media_room_create_failed, ' +
    'agent_dispatch_via_token, agent_dispatch_failed, agent_redispatched (a resume found no ' +
    'agent in the room and dispatched anew) (start); media_room_delete_failed (stop)',
});

export const AssistantStartOut = z
  .object({
    token: z
      .string()
      .meta({ description: 'participant JWT; `placeholder.…` (not a JWT) when media is not configured' }),
    media_url: z.string().meta({ description: 'LIVEKIT_URL; "" when media is not configured' }),
    media_room: z.string().meta({ description: '{MEDIA_ROOM_PREFIX}-{session_id}' }),
    expires_in_sec: z.int().meta({ description: 'token lifetime, TOKEN_TTL_SECONDS' }),
    session_id: z.string(),
    livekit_url: z.string().meta({ description: 'alias of media_url, read by deployed SDKs' }),
    livekit_room: z.string().meta({ description: 'alias of media_room, read by deployed SDKs' }),
    warnings,
    assistant_invocation_id: z.string().meta({
      description:
        'one id per engagement: a new start gets a new one, a resume keeps it; also in the session_start activity',
    }),
  })
  .meta({ id: 'AssistantStartOut' });

export const AssistantStopIn = z
  .object({
    session_id: SessionId,
    user_id: knownText(256).meta({
      description:
        'sent by deployed SDKs; required when session_id is "unknown" (legacy SDKs): such a session is the user\'s own',
    }),
    ...traceFields,
  })
  .meta({ id: 'AssistantStopIn' });

export const AssistantStopOut = z
  .object({ session_id: z.string(), active: z.literal(false), warnings })
  .meta({ id: 'AssistantStopOut' });

export const ReengagementOut = z
  .object({
    session_id: z.string(),
    recommended: z.boolean(),
    channel: z
      .enum(['voice', 'phone'])
      .meta({ description: '`phone` when a registered drop-off left a dialable number, else `voice`' }),
    reason: z.string().meta({
      description:
        '`handoff_unanswered` when the agent said nobody from the team was free (a call back is ' +
        'owed, recommended at once), `user_inactive_<n>min` when recommended for inactivity, else ' +
        '`user_active` or `assistant_active`',
    }),
    inactivity_seconds: z
      .int()
      .meta({ description: 'whole seconds since the last SDK event other than agent telemetry' }),
  })
  .meta({ id: 'Reengagement' });

export type AssistantStartBody = z.infer<typeof AssistantStartOut>;
