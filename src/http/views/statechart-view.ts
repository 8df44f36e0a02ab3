import type { AnyStateMachine, AnyStateNode } from 'xstate';
import { guardName } from '../../machines/machine-export.js';

export interface StatechartTransition {
  /** What the transition waits for: an event type, `after <delay>`, `done: <actor>`, `error: <actor>` or `always`. */
  on: string;
  /** Target state ids; empty for a transition that stays (actions only). */
  targets: string[];
  guard: string | null;
}

export interface StatechartNode {
  /** The state id (`session.voice.active`); the path of keys under the root. */
  id: string;
  key: string;
  type: string;
  /** The initial child's key, for compound states. */
  initial: string | null;
  invokes: string[];
  transitions: StatechartTransition[];
  states: StatechartNode[];
}

/** XState's names for internal events, as an operator reads them. */
function eventLabel(eventType: string, node: AnyStateNode): string {
  const after = /^xstate\.after\.([^.]+)\./.exec(eventType);
  if (after) return `after ${after[1]}`;
  for (const [prefix, label] of [
    ['xstate.done.actor.', 'done'],
    ['xstate.error.actor.', 'error'],
  ] as const) {
    if (!eventType.startsWith(prefix)) continue;
    const invoked = node.invoke.find((definition) => eventType === `${prefix}${definition.id}`);
    return `${label}: ${typeof invoked?.src === 'string' ? invoked.src : eventType.slice(prefix.length)}`;
  }
  if (eventType.startsWith('xstate.done.state.')) return 'done';
  return eventType;
}

function describeNode(node: AnyStateNode): StatechartNode {
  const transitions: StatechartTransition[] = [];
  const add = (
    on: string,
    definitions: readonly { target?: readonly AnyStateNode[] | undefined; guard?: unknown }[],
  ) => {
    for (const definition of definitions) {
      transitions.push({
        on,
        targets: (definition.target ?? []).map((target) => target.id),
        guard: definition.guard ? guardName(definition.guard) : null,
      });
    }
  };
  for (const [eventType, definitions] of node.transitions) add(eventLabel(eventType, node), definitions);
  if (node.always) add('always', node.always);
  const initial = node.initial?.target?.[0];
  return {
    id: node.id,
    key: node.key,
    type: node.type,
    initial: initial ? initial.key : null,
    invokes: node.invoke.map((definition) => (typeof definition.src === 'string' ? definition.src : definition.id)),
    transitions,
    states: Object.values(node.states as Record<string, AnyStateNode>).map(describeNode),
  };
}

/**
 * A machine's states, transitions and invoked actors, walked from its definition at request time:
 * the console draws the statechart from this, so it shows whatever states the code has.
 */
export function statechartView(machine: AnyStateMachine): StatechartNode {
  return describeNode(machine.root);
}
