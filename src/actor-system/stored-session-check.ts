import { z } from 'zod';
import type { StoredSession } from '../store/ports.js';

/**
 * What a stored session must look like before it runs again. The service only stores what its
 * own machine made, but a store is a file (or a server) that outlives the process: a hand edit, a
 * partial restore from backup or a damaged page can hand back a context the code reads without
 * guards. Read on a wake timer, outside any actor, such a context would throw out of a timer
 * callback and stop the process, and again at every start. So each stored session is checked as
 * it leaves the store, and one that fails is set aside with its reason logged.
 *
 * The check covers what is read unconditionally: the timers, the trigger memory, the voice
 * details, the error window and the collections iterated. Fields added to the context after the
 * store landed (flow, dropoff, popup cooldown, invocation id, held bytes) may be missing from a
 * file written before them, so they are checked only when present. Objects are loose: a check
 * that rejected a field it does not know would discard sessions written by a newer build.
 */

const nullableNumber = z.number().nullable();
const nullableString = z.string().nullable();

const trace = z.looseObject({ trace_id: z.string(), request_id: z.string() });

const componentHint = z.looseObject({
  component_id: z.string(),
  hint: z.string(),
  updated_at: z.number(),
});

const registeredSchema = z.looseObject({
  screen_id: z.string(),
  schema: z.record(z.string(), z.unknown()),
  patterns: z.record(z.string(), z.string()),
});

const heldFailure = z.looseObject({ codes: z.array(z.string()), at: z.number() });

const storedContext = z.looseObject({
  session_id: z.string(),
  user_id: nullableString,
  screen: nullableString,
  latest_event: z.record(z.string(), z.unknown()).nullable(),
  component_hints: z.array(componentHint),
  schemas: z.record(z.string(), registeredSchema),
  created_at: z.number(),
  updated_at: z.number(),
  last_touched_at: z.number(),
  idle_timer: z.looseObject({ armed_at: z.number(), delay_ms: z.number() }),
  trigger: z.looseObject({ cooldown_until: nullableNumber, prompted_screens: z.array(z.string()) }),
  voice: z.looseObject({
    room: nullableString,
    dispatch_id: nullableString,
    started_at: nullableNumber,
    stopped_at: nullableNumber,
  }),
  reengagement: z.looseObject({ armed_at: z.number(), trace }).nullable(),
  errors: z.looseObject({ screen: z.string(), failures: z.array(heldFailure), restart_at: nullableNumber }),
  flow: z.looseObject({ flow_key: z.string(), steps: z.array(z.string()) }).nullish(),
  dropoff: z.looseObject({ registered_at: z.number(), has_dialable_phone: z.boolean() }).nullish(),
  popup_cooldown_until: nullableNumber.optional(),
  assistant_invocation_id: nullableString.optional(),
  held_bytes: z.number().optional(),
  held_density: z.number().optional(),
  callback_owed_at: nullableNumber.optional(),
});

/** Why a stored session cannot run again (the first problem, by its path in the context); undefined when it can. */
export function storedDamage(stored: StoredSession): string | undefined {
  const checked = storedContext.safeParse(stored.context);
  if (checked.success) {
    if (checked.data.session_id !== stored.session_id)
      return `context.session_id: ${JSON.stringify(checked.data.session_id)} is not the row's session`;
    return undefined;
  }
  const issue = checked.error.issues[0]!;
  const path = ['context', ...issue.path.map(String)].join('.');
  return `${path}: ${issue.message}`;
}
