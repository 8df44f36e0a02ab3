import type { StateNode } from 'xstate';
import type { SessionMachine } from './machine.js';
import { ingestStep } from './ingest-step.js';
import { sessionMachine } from './machine.js';

const INGEST = 'session.ingest';

/** The logics `withDirectIngest` made: only these apply an SDK event as `ingestStep` alone. */
const direct = new WeakSet<SessionMachine>();

/** Whether `logic` applies an SDK event as `ingestStep` does and nothing more (made by `withDirectIngest`, its ingest action the machine's own). */
export const ingestsDirectly = (logic: SessionMachine): boolean => direct.has(logic);

/**
 * The session logic with SDK events applied without XState's macrostep, when that is provably
 * what the macrostep would do.
 *
 * The machine declares an SDK event as one targetless, unguarded transition at its root whose one
 * action is `ingest` (`ingestStep`): no state is left or entered, no timer or invocation starts,
 * and unless a reengagement timer is armed (then the action raises `user.activity`) nothing else
 * follows. XState still walks all four regions for it, clones the snapshot and looks for eventless
 * transitions, which made the step cost several times the HTTP request around it (docs/decisions/0004-sdk-events-skip-the-macrostep.md). Here such an event gets the same function's context, emissions and reply, on the
 * same actor: its mailbox, snapshot, observers and inspection stay XState's. Any other command, an
 * event while a reengagement timer is armed, and a session not running go through the machine.
 *
 * Checked when wrapped (`assertIngestIsContextOnly`), so a machine that starts to handle SDK events
 * differently refuses to start rather than diverge (a logic provided with another `ingest` action
 * is left as it is); test/machines/direct-ingest.test.ts replays random command sequences through
 * both logics and compares every snapshot, emission and reply.
 */
export function withDirectIngest(logic: SessionMachine): SessionMachine {
  assertIngestIsContextOnly(logic);
  // A logic given its own ingest action (a test's fault injection) keeps the machine's path for it.
  if (logic.implementations.actions.ingest !== sessionMachine.implementations.actions.ingest) return logic;
  const transition: SessionMachine['transition'] = (snapshot, event, scope) => {
    if (event.type !== INGEST || snapshot.status !== 'active' || snapshot.context.reengagement !== null)
      return logic.transition(snapshot, event, scope);
    const step = ingestStep(snapshot.context, event);
    // In the machine's order: the reply is a custom action, run within the step; emissions, as
    // XState's `emit` action does, are delivered once the actor holds the new snapshot.
    event.reply(step.result);
    scope.defer(() => {
      for (const emitted of step.emitted) scope.emit(emitted);
    });
    return { ...snapshot, context: step.context };
  };
  // Everything else (initial snapshot, persistence, restore, the definition the inspector draws) is the machine's own.
  const wrapped = Object.assign(Object.create(logic) as SessionMachine, { transition });
  direct.add(wrapped);
  return wrapped;
}

type AnyNode = StateNode<never, never>;

/** Whether a node's event descriptor (`x.y`, `x.*`, `*`) matches an SDK event. */
const matchesIngest = (descriptor: string): boolean =>
  descriptor === INGEST ||
  descriptor === '*' ||
  (descriptor.endsWith('.*') && INGEST.startsWith(descriptor.slice(0, -1)));

function nodesOf(node: AnyNode): AnyNode[] {
  return [node, ...Object.values(node.states as Record<string, AnyNode>).flatMap(nodesOf)];
}

/** Throws unless the machine handles an SDK event as `withDirectIngest` assumes. */
export function assertIngestIsContextOnly(logic: SessionMachine): void {
  const root = logic.root as unknown as AnyNode;
  const fail = (why: string): never => {
    throw new Error(`session logic: SDK events cannot skip the macrostep: ${why}`);
  };
  const transitions = root.transitions.get(INGEST) ?? fail('the root has no session.ingest transition');
  if (transitions.length !== 1) fail('session.ingest has more than one transition');
  const [transition] = transitions;
  if (transition!.target?.length || transition!.reenter || transition!.guard)
    fail('session.ingest is not targetless and unguarded');
  const actions = transition!.actions.map((action) =>
    typeof action === 'string' ? action : (action as { type?: unknown }).type,
  );
  if (actions.length !== 1 || actions[0] !== 'ingest') fail('session.ingest does more than the ingest action');
  for (const node of nodesOf(root)) {
    if (node !== root && [...node.transitions.keys()].some(matchesIngest))
      fail(`${node.id} handles session.ingest too`);
    // A state with an always-taken eventless transition is passed through, never rested in; any
    // other eventless transition could be enabled by what an event changes in the context.
    if (node.always?.length && !node.always.some((always) => !always.guard))
      fail(`${node.id} has a guarded eventless transition`);
  }
}
