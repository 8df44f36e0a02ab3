import type { InspectionEvent, Observer } from 'xstate';
import { SimulatedClock, createActor } from 'xstate';
import type { ActivityDraft } from '../domain/activity.js';
import type { AssistantCommand, Reply, SessionCommand, SessionEmitted } from '../machines/session/machine-events.js';
import type { SessionSettings } from '../machines/session/session-context.js';
import type { SessionMachine, SessionSnapshot } from '../machines/session/machine.js';
import { dueIdleCheck } from '../machines/session/presence.js';
import type { StoredSession } from '../store/ports.js';
import { restoredVoice, storedContext, toStored } from '../actor-system/stored-session.js';

export interface InvocationInput {
  /** The session machine with its media actors (journaled side effects in the cluster). */
  logic: SessionMachine;
  sessionId: string;
  settings: SessionSettings;
  /** The invocation's time (Restate's, journaled): the machine's clock stands still at it. */
  at: number;
  /** The session as its object state holds it; undefined for a new session. */
  stored: StoredSession | undefined;
  /** The command to deliver, given its reply callback; absent for a timer wake. */
  command?: ((reply: Reply<unknown>) => SessionCommand) | undefined;
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void) | undefined;
}

export interface InvocationOutcome {
  /** The machine's reply to the command; undefined for a wake. */
  reply: unknown;
  /** What to keep as the object's state; null when the session expired (its state is cleared). */
  stored: StoredSession | null;
  /** Activity emitted, in order: each is written once, under a key derived from the invocation. */
  activity: ActivityDraft[];
  commands: AssistantCommand[];
  /** Notices for the voice agent (context_updated), in order. */
  notices: Extract<SessionEmitted, { type: 'agent.notice' }>[];
}

export class SessionInvocationError extends Error {
  override name = 'SessionInvocationError';
}

/**
 * Media work under way: a voice start or stop, or the agent watch checking the room or replacing a
 * dispatch (docs/decisions/0032-an-agent-joins-or-the-call-ends.md). The invocation waits for it:
 * an invoked call cut off with the invocation would leave its state waiting on a result that
 * never comes.
 */
const mediaBusy = (snapshot: SessionSnapshot): boolean =>
  snapshot.matches({ voice: 'starting' }) ||
  snapshot.matches({ voice: 'stopping' }) ||
  snapshot.matches({ agent: 'checking' }) ||
  snapshot.matches({ agent: 'rechecking' }) ||
  snapshot.matches({ agent: 'redispatching' });

/**
 * One invocation of a session hosted outside this process: the machine is rebuilt from the kept
 * context on a clock standing at the invocation's time, timers already due fire (a wake, or a
 * command arriving just after a deadline), the command is delivered, and the invocation ends once
 * the reply is given and no media work is under way. Timers still pending die with the actor:
 * the caller turns the deadlines the kept context holds into one delayed call.
 */
export async function runSessionInvocation(input: InvocationInput): Promise<InvocationOutcome> {
  const { sessionId, settings, at, stored } = input;
  const clock = new SimulatedClock();
  clock.set(at);
  const activity: ActivityDraft[] = [];
  const commands: AssistantCommand[] = [];
  const notices: InvocationOutcome['notices'] = [];
  let expired = false;
  const actor = createActor(input.logic, {
    id: sessionId,
    input: { sessionId, at, settings, restored: stored ? storedContext(stored) : undefined },
    clock,
    ...(input.inspect ? { inspect: input.inspect } : {}),
  });
  actor.on('activity', (emitted) => activity.push(emitted.draft));
  actor.on('command', (emitted) => commands.push(emitted.command));
  actor.on('agent.notice', (emitted) => notices.push(emitted));
  actor.on('session.expired', () => (expired = true));

  let replied = false;
  let reply: unknown;
  const settled = new Promise<void>((resolve, reject) => {
    const check = (snapshot: SessionSnapshot) => {
      if (snapshot.status === 'error') reject(new SessionInvocationError(`session ${sessionId}: machine failed`));
      else if ((replied || !input.command) && !mediaBusy(snapshot)) resolve();
      else if (!replied && input.command && !mediaBusy(snapshot) && commandSent)
        reject(new SessionInvocationError(`session ${sessionId}: no reply`));
    };
    let commandSent = false;
    actor.subscribe({
      next: () => (commandSent ? check(actor.getSnapshot()) : undefined),
      error: (error) => reject(error instanceof Error ? error : new SessionInvocationError(String(error))),
    });
    actor.start();
    if (stored) actor.send({ type: 'session.restore', at, voice: restoredVoice(stored) });
    // Deadlines at or before now fire here, before the command, as they would have on time. The
    // idle check is no timer of the machine's: it is sent when due
    // (docs/decisions/0043-the-idle-check-sent-by-the-host.md).
    clock.set(at);
    const idleCheck = dueIdleCheck(actor.getSnapshot().context, at);
    if (idleCheck) actor.send(idleCheck);
    if (input.command) {
      actor.send(
        input.command((value) => {
          replied = true;
          reply = value;
        }),
      );
    }
    commandSent = true;
    check(actor.getSnapshot());
  });
  try {
    await settled;
    return { reply, stored: expired ? null : toStored(actor.getSnapshot()), activity, commands, notices };
  } finally {
    actor.stop();
  }
}
