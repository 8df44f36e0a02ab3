import type { AnyStateMachine } from 'xstate';

/**
 * A machine's config as Stately's editor imports it (`createMachine({...})` code, or the JSON
 * its Code panel exports): states, transitions, guards, actions, invoked actors and delays, all
 * by the names `setup` gives them. Functions in a config are implementation, not diagram (the
 * context factory, actor inputs, dynamic params): they are left out. Built-in actions such as
 * `raise` keep their type and, when static, their event; inline guards built with `and`, `or`,
 * `not` or `stateIn` become a name that says what they check (`voiceInactive and idleForTtl`).
 *
 * `machine.toJSON()` is not used: it is XState's resolved definition (transition lists,
 * document order, `#id` targets), which the editor does not import.
 */
export function exportableConfig(machine: AnyStateMachine): Record<string, unknown> {
  return toJsonValue(machine.config) as Record<string, unknown>;
}

function toJsonValue(value: unknown, key?: string): unknown {
  if (typeof value === 'function') return key === 'guard' ? guardName(value) : builtInAction(value);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => toJsonValue(item)).filter((item) => item !== undefined);
  const copy: Record<string, unknown> = {};
  for (const [name, item] of Object.entries(value)) {
    const converted = toJsonValue(item, name);
    if (converted !== undefined) copy[name] = converted;
  }
  return copy;
}

/** A guard as the editor shows it: its name, or what an inline higher-order guard checks. */
export function guardName(guard: unknown): string {
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'object' && guard !== null) return String((guard as { type?: unknown }).type);
  const { name, guards, stateValue } = guard as { name: string; guards?: unknown[]; stateValue?: unknown };
  if (name === 'stateIn') return `in ${JSON.stringify(stateValue)}`;
  const parts = (guards ?? []).map((inner) =>
    typeof inner === 'function' ? `(${guardName(inner)})` : guardName(inner),
  );
  return name === 'not' ? `not ${parts.join(' ')}` : parts.join(` ${name} `);
}

/** `raise(...)` and its kind are functions carrying their `type` (`xstate.raise`) and arguments. */
function builtInAction(action: object): Record<string, unknown> | undefined {
  const { type, event } = action as { type?: unknown; event?: unknown };
  if (typeof type !== 'string') return undefined;
  return event !== null && typeof event === 'object' ? { type, params: { event } } : { type };
}
