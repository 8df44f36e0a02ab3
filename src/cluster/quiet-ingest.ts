import { ingestsDirectly } from '../machines/session/direct-ingest.js';
import { ingestStep } from '../machines/session/ingest-step.js';
import { restoredVoice, storedContext, storedView, toStored } from '../actor-system/stored-session.js';
import type { InvocationInput, InvocationOutcome } from './session-invocation.js';

/**
 * An SDK event to a session with nothing under way and nothing due, applied without rebuilding
 * the machine around it; undefined for any other invocation, which `runSessionInvocation` runs.
 *
 * The rebuild (the actor's initial snapshot, the `session.restore` macrostep, starting and
 * stopping the actor) was most of what such an invocation cost in a service process
 * (docs/decisions/0024-quiet-sessions-skip-the-rebuild.md). For a session whose voice is
 * inactive, with no reengagement armed and no deadline at or before the event (its `wake_at`,
 * the earliest of every timer it keeps), that rebuild provably comes to: the context
 * `restoredContext` makes, every region in its initial state but the trigger's (cooling down
 * while its cooldown runs), no timer firing and nothing emitted; and the event is then
 * `ingestStep` alone (direct-ingest.ts). That context and state value are what `storedView` reads
 * of a kept session; here the step is applied to them and the snapshot resolved from the result.
 * test/cluster/quiet-ingest.test.ts runs random sessions through both paths and compares every
 * outcome. An inspected invocation takes the machine, so the inspector sees every event.
 */
export function quietIngest(input: InvocationInput): InvocationOutcome | undefined {
  const { logic, stored, at, settings } = input;
  if (!stored || !input.command || input.inspect || !ingestsDirectly(logic)) return undefined;
  if (
    stored.wake_at === null ||
    stored.wake_at <= at ||
    restoredVoice(stored) !== 'inactive' ||
    storedContext(stored).reengagement !== null
  )
    return undefined;
  let reply: unknown;
  const command = input.command((value) => (reply = value));
  if (command.type !== 'session.ingest') return undefined;
  // The context and state value the rebuild reaches, as a read of the kept session shows them.
  const { context, value } = storedView(stored, settings, at);
  const step = ingestStep(context, command);
  command.reply(step.result);
  const snapshot = logic.resolveState({ value, context: step.context });
  const outcome: InvocationOutcome = { reply, stored: toStored(snapshot), activity: [], commands: [], notices: [] };
  for (const emitted of step.emitted) {
    if (emitted.type === 'activity') outcome.activity.push(emitted.draft);
    else outcome.notices.push(emitted);
  }
  return outcome;
}
