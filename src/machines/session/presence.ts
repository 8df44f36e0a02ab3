/**
 * The presence region: the idle check that evicts a session untouched for SESSION_IDLE_TTL_SECONDS
 * with nothing under way, re-armed for what remains when a command touched it meanwhile.
 */
import { and } from 'xstate';
import { sessionSetup } from './setup.js';

export const presenceRegion = sessionSetup.createStateConfig({
  initial: 'live',
  states: {
    live: {
      after: {
        idleCheck: [
          // A reengagement still to come keeps the session (after a restart both can be due
          // at once, and the idle check, armed first, would drop the reengagement unrecorded).
          { guard: and(['voiceInactive', 'noReengagementArmed', 'idleForTtl']), target: 'expired' },
          // Re-entering only `live` (a transition declared on the state, not on the region: a
          // re-entering transition on a region re-enters the whole parallel machine).
          { target: 'live', reenter: true, actions: 'rearmIdleTimer' },
        ],
      },
    },
    expired: { entry: 'announceExpiry' },
  },
});
