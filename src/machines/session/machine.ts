/**
 * The session machine: one KYC user's session, assembled from its five parallel regions (voice,
 * trigger cooldown, presence, reengagement, agent) and the commands it takes in any state. Each region
 * is a module of its own with its actions; the rules they apply live beside them (decisions.ts,
 * ingest.ts, persistence.ts).
 */
import type { SnapshotFrom } from 'xstate';
import { agentRegion } from './agent-watch.js';
import { commandSetup, rootCommands } from './commands.js';
import { newContext } from './session-context.js';
import { presenceRegion } from './presence.js';
import { restoredContext } from './persistence.js';
import { reengagementRegion } from './session-reengagement.js';
import { triggerCooldownRegion } from './trigger-cooldown.js';
import { voiceRegion } from './voice-lifecycle.js';

/**
 * One KYC user's session. Pure: time arrives on each command (`at`), timers are named delays
 * (but the idle check, which the host sends: presence.ts), media work is invoked promise actors
 * provided at bootstrap, and everything the world should know leaves as an emission.
 */
export const sessionMachine = commandSetup.createMachine({
  id: 'session',
  type: 'parallel',
  context: ({ input }) =>
    input.restored ? restoredContext(input.restored, input.settings, input.at) : newContext(input),
  on: rootCommands,
  states: {
    voice: voiceRegion,
    trigger: triggerCooldownRegion,
    presence: presenceRegion,
    reengagement: reengagementRegion,
    agent: agentRegion,
  },
});

export type SessionMachine = typeof sessionMachine;
export type SessionSnapshot = SnapshotFrom<SessionMachine>;
