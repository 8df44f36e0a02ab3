import { z } from 'zod';

/**
 * How often a voice agent refreshes the context it fetched (docs/decisions/0006-the-voice-agents-context.md): periodically, on each user
 * turn if asked to, and never two fetches closer than the minimum interval.
 */
export const RefreshPolicySchema = z
  .object({
    interval_seconds: z
      .int()
      .positive()
      .meta({ description: 'periodic refresh, counted from the last fetch (VOICE_CONTEXT_REFRESH_SECONDS)' }),
    on_user_turn: z
      .boolean()
      .meta({ description: 'refresh after each user turn (VOICE_CONTEXT_REFRESH_ON_USER_TURN)' }),
    min_interval_seconds: z
      .int()
      .nonnegative()
      .meta({ description: 'never two fetches closer than this (VOICE_CONTEXT_REFRESH_MIN_INTERVAL_SECONDS)' }),
  })
  .meta({ id: 'RefreshPolicy' });

export type RefreshPolicy = z.infer<typeof RefreshPolicySchema>;

export const DEFAULT_REFRESH_POLICY: RefreshPolicy = {
  interval_seconds: 60,
  on_user_turn: true,
  min_interval_seconds: 5,
};

const ServedPolicy = z.object({ context: z.object({ refresh_policy: RefreshPolicySchema }) });

/** The policy a context response carries, if it carries a valid one: the service is the source of truth. */
export function servedRefreshPolicy(response: unknown): RefreshPolicy | undefined {
  const parsed = ServedPolicy.safeParse(response);
  return parsed.success ? parsed.data.context.refresh_policy : undefined;
}
