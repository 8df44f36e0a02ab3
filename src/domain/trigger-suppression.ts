import { normaliseStepId } from './step-id.js';
import type { SuppressionReason, TriggerDecision } from './trigger-policy.js';

/** What a session remembers of the triggers it fired; times are epoch milliseconds. */
export interface TriggerMemory {
  /** When the cooldown after the last fired trigger ends; a restore re-arms the timer from it. */
  cooldown_until: number | null;
  /** Screens (lower-cased) on which a trigger fired, oldest first. */
  prompted_screens: string[];
}

/** Every KYC flow has a dozen screens; the bound only stops a client inventing screens forever. */
export const MAX_PROMPTED_SCREENS = 64;

/** A trigger fired while no screen was known still counts, under this key. */
const UNKNOWN_SCREEN = '';

/** Shared by every session until its first fired trigger: updates replace it, never mutate it. */
const NO_TRIGGER_MEMORY: TriggerMemory = Object.freeze({
  cooldown_until: null,
  prompted_screens: Object.freeze([]) as unknown as string[],
});

export const newTriggerMemory = (): TriggerMemory => NO_TRIGGER_MEMORY;

const promptKey = (screen: string | null | undefined): string => (screen ? normaliseStepId(screen) : UNKNOWN_SCREEN);

export function wasPrompted(memory: TriggerMemory, screen: string | null | undefined): boolean {
  return memory.prompted_screens.includes(promptKey(screen));
}

/** The memory after a trigger fired at `at` on `screen`, cooling down for `cooldownMs`. */
export function rememberPrompt(
  memory: TriggerMemory,
  screen: string | null | undefined,
  at: number,
  cooldownMs: number,
): TriggerMemory {
  const key = promptKey(screen);
  const screens = memory.prompted_screens.filter((prompted) => prompted !== key);
  screens.push(key);
  return {
    cooldown_until: cooldownMs > 0 ? at + cooldownMs : null,
    prompted_screens:
      screens.length > MAX_PROMPTED_SCREENS ? screens.slice(screens.length - MAX_PROMPTED_SCREENS) : screens,
  };
}

/**
 * The memory once a voice session ended at `at`: the end counts as an offer for the cooldown (the
 * user just hung up), without marking the screen prompted. A longer cooldown running is kept.
 */
export function coolDownAfterVoice(memory: TriggerMemory, at: number, cooldownMs: number): TriggerMemory {
  const until = at + cooldownMs;
  if (cooldownMs <= 0 || (memory.cooldown_until !== null && memory.cooldown_until >= until)) return memory;
  return { ...memory, cooldown_until: until };
}

export interface SuppressionFacts {
  /** A voice session is starting, running or stopping. */
  assistantActive: boolean;
  /** Milliseconds left of the cooldown, when the session is cooling down. */
  cooldownRemainingMs: number | undefined;
  /** `allow_multiple_assistant_prompt` is off and a trigger already fired on this screen. */
  alreadyPrompted: boolean;
}

/**
 * docs/decisions/0005-trigger-policy.md: a matched rule does not fire while the assistant is active, during the cooldown
 * after the last fired trigger, or on a screen already prompted; checked in that order.
 * A decision that did not fire has nothing to suppress and passes through.
 */
export function suppressTrigger(decision: TriggerDecision, facts: SuppressionFacts): TriggerDecision {
  if (!decision.trigger) return decision;
  const suppressed = (reason: SuppressionReason) =>
    ({
      trigger: false,
      reason,
      action: 'none',
      intervention_mode: 'none',
      suppressed_reason: decision.reason,
    }) as const;
  if (facts.assistantActive) return suppressed('assistant_active');
  if (facts.cooldownRemainingMs !== undefined) {
    return { ...suppressed('cooldown'), retry_after_seconds: Math.max(1, Math.ceil(facts.cooldownRemainingMs / 1000)) };
  }
  if (facts.alreadyPrompted) return suppressed('already_prompted');
  return decision;
}
