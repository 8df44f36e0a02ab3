import { z } from 'zod';
import { SessionId, mustBe, optionalText, text } from '../../domain/sdk-event.js';
import { SUPPRESSION_REASONS, TRIGGER_RULES } from '../../domain/trigger-policy.js';

/**
 * A year: far beyond any time on a screen, and below the 9-digit numbers the redaction pass reads
 * as identity values (docs/explanation/privacy.md), which a signal must never be turned into.
 */
const MAX_SIGNAL_SECONDS = 31_536_000;

const seconds = z
  .number(mustBe('a number of seconds'))
  .nonnegative({ error: 'must not be negative' })
  .max(MAX_SIGNAL_SECONDS, { error: `must be at most ${MAX_SIGNAL_SECONDS} (a year of seconds)` })
  .nullish()
  .meta({ description: 'seconds, at most a year' });

/** The trigger body's signals (docs/explanation/trigger-policy.md); every signal may be absent (or null, as some SDK builds send). */
export const TriggerSignalsIn = z
  .looseObject(
    {
      screen: optionalText(256).meta({ description: "screen id; absent, the session's screen is used" }),
      time_spent: seconds,
      errors: z
        .array(text(256), { error: 'must be an array of strings' })
        .max(100, { error: 'must hold at most 100 codes' })
        .nullish(),
      idle_seconds: seconds,
    },
    mustBe('an object'),
  )
  .meta({ id: 'TriggerSignals' });

export const TriggerEvaluateIn = z
  .looseObject({
    signals: TriggerSignalsIn,
    session_id: SessionId.nullish().meta({
      description: "evaluate in this session's actor (cooldown, suppression); created when unknown",
    }),
    user_id: optionalText(256),
    client_id: optionalText(256).meta({
      description: 'fills the session client_id when it has none; the tenant unless the session names another',
    }),
    traceparent: optionalText(256),
    trace_id: optionalText(128),
    request_id: optionalText(128),
  })
  .meta({ id: 'TriggerEvaluateIn' });

export type TriggerEvaluateBody = z.infer<typeof TriggerEvaluateIn>;

export const TriggerEvaluateOut = z
  .object({
    trigger: z.boolean(),
    reason: z.enum(['none', ...TRIGGER_RULES, ...SUPPRESSION_REASONS]),
    action: z.enum(['start_voice_agent', 'none']),
    intervention_mode: z.enum(['voice_offer', 'none']),
    suppressed_reason: z
      .enum(TRIGGER_RULES)
      .optional()
      .meta({ description: 'the rule that matched but was suppressed' }),
    retry_after_seconds: z
      .int()
      .optional()
      .meta({ description: 'with reason cooldown: seconds until a trigger may fire again' }),
  })
  .meta({ id: 'TriggerEvaluateOut' });
