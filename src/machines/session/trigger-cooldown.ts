/**
 * The trigger region: after a trigger fires (or a voice session ends), no new offer of voice for
 * the tenant's min_trigger_interval_seconds; the evaluation reads the cooldown from this state.
 */
import { sessionSetup } from './setup.js';

export const triggerCooldownRegion = sessionSetup.createStateConfig({
  initial: 'ready',
  states: {
    ready: {
      on: { 'trigger.fired': 'cooldown', 'session.restore': { guard: 'restoredCoolingDown', target: 'cooldown' } },
    },
    // A voice session's end while cooling down starts the cooldown again, from the stop.
    cooldown: { after: { triggerCooldown: 'ready' }, on: { 'trigger.fired': { target: 'cooldown', reenter: true } } },
  },
});
