/**
 * The presence region: the idle check that evicts a session untouched for SESSION_IDLE_TTL_SECONDS
 * with nothing under way, re-armed for what remains when a command touched it meanwhile. The host
 * sends the check when `idle_timer` is due (docs/decisions/0043-the-idle-check-sent-by-the-host.md).
 */
import { and } from 'xstate';
import { idleTimerDeadline } from '../../domain/idle-timer.js';
import type { SessionContext, SessionIdleCheck } from './session-context.js';
import { sessionSetup } from './setup.js';

/**
 * The idle check a host sends at `at`, or undefined while the session's `idle_timer` is not yet
 * due: the one test the residency's walk and a cluster invocation both make before sending it.
 */
export function dueIdleCheck(context: Pick<SessionContext, 'idle_timer'>, at: number): SessionIdleCheck | undefined {
  return idleTimerDeadline(context.idle_timer) <= at ? { type: 'session.idle_check', at } : undefined;
}

export const presenceRegion = sessionSetup.createStateConfig({
  initial: 'live',
  states: {
    live: {
      on: {
        'session.idle_check': [
          // Sent early, it is not yet the check: the machine takes the check to happen at its deadline.
          { guard: 'idleCheckNotDue' },
          // A reengagement still to come keeps the session: its prompt is recorded before the session may end.
          { guard: and(['voiceInactive', 'noReengagementArmed', 'idleForTtl']), target: 'expired' },
          { actions: 'rearmIdleTimer' },
        ],
      },
    },
    expired: { entry: 'announceExpiry' },
  },
});
