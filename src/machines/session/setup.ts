/**
 * The session machine's setup, shared by every region: its types, the media actors provided at
 * bootstrap, the named delays, the guards, and the actions every region runs (noting the time of a
 * command, the idle check). Each region adds its own actions to it with `extend`, in the order
 * reengagement.ts, voice-lifecycle.ts, commands.ts (the last one holds them all); presence.ts and
 * trigger-cooldown.ts need only these; machine.ts assembles the regions.
 */
import { assign, emit, fromPromise, not, setup, stateIn } from 'xstate';
import { idleForTtl, idleTimerDeadline, rearmIdleTimer } from '../../domain/idle-timer.js';
import type { SessionContext, SessionInput, SessionMachineEvent } from './session-context.js';
import { currentRoom, reengagementDeadline } from './session-context.js';
import type { SessionEmitted } from './machine-events.js';
import type { AgentPresence } from '../../domain/voice-session.js';
import { agentJoinWindowMs } from '../../domain/voice-session.js';
import type { FindAgentInput, IssuedToken, ReplaceDispatchInput, RoomInput, TokenInput } from './media-contract.js';

const unprovided = () => Promise.reject(new Error('media actors are provided at bootstrap'));

/** The input of the media actors that need only the room. */
export const roomInput = ({ context }: { context: SessionContext }): RoomInput => ({
  room: currentRoom(context),
  sessionId: context.session_id,
});

export const sessionSetup = setup({
  types: {
    context: {} as SessionContext,
    events: {} as SessionMachineEvent,
    emitted: {} as SessionEmitted,
    input: {} as SessionInput,
  },
  actors: {
    createRoom: fromPromise<void, RoomInput>(unprovided),
    findAgentDispatch: fromPromise<string | null, FindAgentInput>(unprovided),
    dispatchAgent: fromPromise<string, RoomInput>(unprovided),
    mintToken: fromPromise<IssuedToken, TokenInput>(unprovided),
    deleteRoom: fromPromise<void, RoomInput>(unprovided),
    checkAgent: fromPromise<AgentPresence, RoomInput>(unprovided),
    replaceDispatch: fromPromise<string, ReplaceDispatchInput>(unprovided),
  },
  delays: {
    voiceSilenceCheck: ({ context }) => context.voice_silence?.delay_ms ?? context.settings.voiceSilenceMs,
    // The agent watch's next check: what is left until it is due when the event says the time (a
    // start, a restore, the agent's first fetch), else the whole interval: the check then follows
    // a media call just made, and `due_at` was moved on by as much.
    agentCheck: ({ context, event }) => {
      const watch = context.agent_watch;
      if (!watch) return context.settings.agentJoinMs;
      const interval =
        watch.joined_at === null
          ? agentJoinWindowMs(context.settings.agentJoinMs, watch.attempts)
          : context.settings.roomCheckMs;
      if (!('at' in event) || typeof event.at !== 'number') return interval;
      return Math.max(0, watch.due_at - event.at);
    },
    // The tenant's min_trigger_interval_seconds at the moment the trigger fired; after a restore, what is left of it.
    triggerCooldown: ({ context, event }) => {
      if (event.type === 'trigger.fired') return event.cooldownMs;
      if (event.type === 'session.restore') return Math.max(0, (context.trigger.cooldown_until ?? event.at) - event.at);
      return 0;
    },
    reengagementInactivity: ({ context, event }) =>
      event.type === 'session.restore' && context.reengagement
        ? Math.max(0, reengagementDeadline(context, context.reengagement) - event.at)
        : context.settings.reengagementInactivitySeconds * 1000,
  },
  guards: {
    voiceInactive: stateIn({ voice: 'inactive' }),
    // Starting and stopping count as active: a prompt then would talk over an assistant coming or going.
    assistantActive: not(stateIn({ voice: 'inactive' })),
    triggerCoolingDown: stateIn({ trigger: 'cooldown' }),
    noReengagementArmed: stateIn({ reengagement: 'idle' }),
    idleCheckNotDue: ({ context, event }) =>
      event.type === 'session.idle_check' && event.at < idleTimerDeadline(context.idle_timer),
    idleForTtl: ({ context }) => idleForTtl(context.idle_timer, context.last_touched_at, context.settings.idleTtlMs),
    voiceSilent: ({ context }) => {
      const silence = context.voice_silence;
      return silence ? idleForTtl(silence, silence.alive_at, context.settings.voiceSilenceMs) : false;
    },
    mediaReady: ({ context }) => context.settings.mediaReady,
    dispatchRecorded: ({ context }) => context.voice.dispatch_id !== null,
    dispatchFound: (_, params: { dispatchId: string | null }) => params.dispatchId !== null,
    // A resume looks for the agent itself when it could be missing: one that joined may have left,
    // and one not seen by its time to join is not coming. Within that time the dispatch stands.
    resumingWatchedCall: ({ context }) => {
      const watch = context.agent_watch;
      const start = context.voiceWork.start;
      if (start?.resumed !== true || !watch) return false;
      return (
        watch.joined_at !== null ||
        start.command.at >= watch.dispatched_at + agentJoinWindowMs(context.settings.agentJoinMs, watch.attempts)
      );
    },
    agentMissing: (_, params: { presence: AgentPresence }) => params.presence !== 'present',
    restoredVoiceActive: ({ event }) => event.type === 'session.restore' && event.voice === 'active',
    restoredCoolingDown: ({ context, event }) =>
      event.type === 'session.restore' && (context.trigger.cooldown_until ?? 0) > event.at,
    restoredReengagement: ({ context, event }) => event.type === 'session.restore' && context.reengagement !== null,
  },
  actions: {
    // A command only notes the time: restarting the idle timer on every command would cost a
    // microstep and a timer swap per event (see idle-timer.ts).
    touch: assign({ last_touched_at: ({ context, event }) => ('at' in event ? event.at : context.last_touched_at) }),
    rearmIdleTimer: assign({
      idle_timer: ({ context }) =>
        rearmIdleTimer(context.idle_timer, context.last_touched_at, context.settings.idleTtlMs),
    }),
    announceExpiry: emit(({ context }) => ({ type: 'session.expired' as const, sessionId: context.session_id })),
  },
});
