/**
 * The presence region: the idle check that evicts a session untouched for SESSION_IDLE_TTL_SECONDS
 * with nothing under way, re-armed for what remains when a command touched it meanwhile. The host
 * sends the check when `idle_timer` is due (docs/decisions/0043-the-idle-check-sent-by-the-host.md).
 */
import { and } from 'xstate';
import { sessionSetup } from './setup.js';

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
