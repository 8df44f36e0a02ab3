import type { AnyStateMachine } from 'xstate';

/**
 * A machine's config as Stately's editor imports it (`createMachine({...})` code, or the JSON
 * its Code panel exports): states, transitions, guards, actions, invoked actors and delays, all
 * by the names `setup` gives them. Functions in a config are implementation, not diagram (the
 * context factory, actor inputs, dynamic params): they are left out. Built-in actions such as
 * `raise` keep their type and, when static, their event.
 *
 * `machine.toJSON()` is not used: it is XState's resolved definition (transition lists,
 * document order, `#id` targets), which the editor does not import.
 */
export function exportableConfig(machine: AnyStateMachine): Record<string, unknown> {
  return toJsonValue(machine.config) as Record<string, unknown>;
}

function toJsonValue(value: unknown): unknown {
  if (typeof value === 'function') return builtInAction(value);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(toJsonValue).filter((item) => item !== undefined);
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const converted = toJsonValue(item);
    if (converted !== undefined) copy[key] = converted;
  }
  return copy;
}

/** `raise(...)` and its kind are functions carrying their `type` (`xstate.raise`) and arguments. */
function builtInAction(action: object): Record<string, unknown> | undefined {
  const { type, event } = action as { type?: unknown; event?: unknown };
  if (typeof type !== 'string') return undefined;
  return event !== null && typeof event === 'object' ? { type, params: { event } } : { type };
}
