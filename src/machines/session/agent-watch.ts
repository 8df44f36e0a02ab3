/**
 * The agent region: while a call runs with media, whether its agent joined, and whether its room
 * and agent are still there (docs/decisions/0032-an-agent-joins-or-the-call-ends.md). A dispatched
 * agent gets VOICE_AGENT_JOIN_SECONDS to join, once more for each attempt; one that has not is
 * dispatched again, up to VOICE_AGENT_DISPATCH_ATTEMPTS, and then the call ends with `no_agent`.
 * Once joined, the room is checked every VOICE_ROOM_CHECK_SECONDS: a room gone from the media
 * server ends the call with `media_lost`; an agent gone from it is dispatched again, a fresh round
 * of attempts when it had stayed past its first check. The voice region does the ending.
 */
import { and, enqueueActions } from 'xstate';
import type { AgentPresence, VoiceEndedBy } from '../../domain/voice-session.js';
import { agentJoinWindowMs } from '../../domain/voice-session.js';
import type { AgentWatch, SessionContext } from './session-context.js';
import { activity, currentRoom } from './session-context.js';
import { roomInput } from './setup.js';
import { voiceSetup } from './voice-lifecycle.js';

/** Room checks in a row the media server may leave unanswered before the call counts as lost. */
export const MAX_UNANSWERED_CHECKS = 3;

/**
 * An agent that left stayed in the call past its first room check: its leaving starts a fresh
 * round of dispatches. One that left before (a job whose dispatch was already replaced, found in
 * the room as it left) counts on against the attempts, so a call whose jobs keep arriving late
 * ends with `no_agent` instead of dispatching forever (docs/decisions/0032-an-agent-joins-or-the-call-ends.md).
 */
function stayedPastFirstCheck(watch: AgentWatch, settings: SessionContext['settings']): boolean {
  return watch.joined_at !== null && watch.due_at > watch.joined_at + settings.roomCheckMs;
}

export const agentWatchSetup = voiceSetup.extend({
  guards: {
    agentJoined: ({ context }) => context.agent_watch?.joined_at != null,
    watching: ({ context }) => context.agent_watch != null,
    presence: (_, params: { presence: AgentPresence; is: AgentPresence }) => params.presence === params.is,
    roomLost: ({ context }, params: { presence: AgentPresence }) =>
      params.presence === 'room_gone' && context.agent_watch?.via_token === false,
    dispatchesLeft: ({ context }) => (context.agent_watch?.attempts ?? 0) < context.settings.agentDispatchAttempts,
    roundLeft: ({ context }) => {
      const watch = context.agent_watch;
      if (!watch) return false;
      return stayedPastFirstCheck(watch, context.settings) || watch.attempts < context.settings.agentDispatchAttempts;
    },
    checksUnanswered: ({ context }) => (context.agent_watch?.unanswered ?? 0) + 1 >= MAX_UNANSWERED_CHECKS,
    restoredWatch: ({ context, event }) =>
      event.type === 'session.restore' && event.voice === 'active' && context.agent_watch != null,
  },
  actions: {
    /** The agent was seen: in the room's participants at a check, or by its first context fetch (at `at`). */
    noteJoined: enqueueActions(
      ({ context, enqueue }, params: { signal: 'room_check' | 'context_fetch'; at?: number }) => {
        const watch = context.agent_watch;
        if (!watch || watch.joined_at !== null) return;
        const at = params.at ?? watch.due_at;
        enqueue.assign({
          agent_watch: { ...watch, joined_at: at, due_at: at + context.settings.roomCheckMs, unanswered: 0 },
        });
        // A join is how a call should go: no activity item (the typical order stays as it is), only the metric.
        // Only the fetch says when the agent came: a check says only that it had by then.
        enqueue.emit({
          type: 'agent.joined',
          joinMs: params.signal === 'context_fetch' ? at - watch.dispatched_at : null,
        });
      },
    ),
    /** The room and its agent are still there: the next check comes an interval later. */
    checkAgain: enqueueActions(({ context, enqueue }, params: { unanswered: boolean }) => {
      const watch = context.agent_watch!;
      const interval =
        watch.joined_at === null
          ? agentJoinWindowMs(context.settings.agentJoinMs, watch.attempts)
          : context.settings.roomCheckMs;
      enqueue.assign({
        agent_watch: {
          ...watch,
          due_at: watch.due_at + interval,
          unanswered: params.unanswered ? watch.unanswered + 1 : 0,
        },
      });
    }),
    /** The agent that had joined is gone from the room while the call runs. */
    noteAgentLeft: enqueueActions(({ context, enqueue }) => {
      const watch = context.agent_watch!;
      const attempts = stayedPastFirstCheck(watch, context.settings) ? 0 : watch.attempts;
      enqueue.assign({ agent_watch: { ...watch, joined_at: null, attempts, unanswered: 0 } });
      enqueue.emit(
        activity(context, 'voice_agent', watch.due_at, watch.trace, {
          outcome: 'agent_left',
          room: currentRoom(context),
          dispatch_id: context.voice.dispatch_id,
        }),
      );
    }),
    noteRedispatch: enqueueActions(({ context, enqueue }, params: { dispatchId: string | null }) => {
      const watch = context.agent_watch!;
      const at = watch.due_at;
      const next: AgentWatch = {
        ...watch,
        attempts: watch.attempts + 1,
        dispatched_at: at,
        due_at: at + agentJoinWindowMs(context.settings.agentJoinMs, watch.attempts + 1),
        unanswered: 0,
      };
      enqueue.assign({ agent_watch: next, voice: { ...context.voice, dispatch_id: params.dispatchId } });
      enqueue.emit(
        activity(context, 'voice_agent', at, watch.trace, {
          outcome: params.dispatchId === null ? 'dispatch_failed' : 'redispatched',
          room: currentRoom(context),
          dispatch_id: params.dispatchId,
          replaced: context.voice.dispatch_id,
          attempt: next.attempts,
        }),
      );
    }),
    /**
     * The media server said the agent left or the room finished (`agent.check`): answered whatever
     * the region's state; `now` (its agent had joined) makes the check that was due later due now.
     */
    checkNow: enqueueActions(({ context, event, enqueue }, params: { now: boolean }) => {
      if (event.type !== 'agent.check') return;
      const watch = context.agent_watch;
      if (params.now && watch) enqueue.assign({ agent_watch: { ...watch, due_at: Math.min(watch.due_at, event.at) } });
      const reply = event.reply;
      enqueue(() => reply({ checking: params.now }));
    }),
    endCall: enqueueActions(({ context, enqueue }, params: { endedBy: Exclude<VoiceEndedBy, 'silence'> }) => {
      const watch = context.agent_watch!;
      enqueue.raise({ type: 'voice.end', endedBy: params.endedBy, at: watch.due_at });
    }),
  },
});

/**
 * Taken in every state of the region, from the state itself: a transition from the region node
 * that re-enters would re-enter the whole parallel machine, every other region included.
 */
const watchCommands = agentWatchSetup.createStateConfig({
  on: {
    'agent.watch': [
      { guard: 'agentJoined', target: 'joined', reenter: true },
      { guard: 'watching', target: 'awaiting', reenter: true },
      { target: 'idle' },
    ],
    'agent.unwatch': { target: 'idle' },
    'agent.check': { actions: { type: 'checkNow', params: { now: false } } },
  },
}).on;

export const agentRegion = agentWatchSetup.createStateConfig({
  initial: 'idle',
  states: {
    idle: {
      on: {
        ...watchCommands,
        'session.restore': [
          { guard: and(['restoredWatch', 'agentJoined']), target: 'joined' },
          { guard: 'restoredWatch', target: 'awaiting' },
        ],
      },
    },
    awaiting: {
      on: {
        ...watchCommands,
        'agent.heard': {
          target: 'joined',
          actions: { type: 'noteJoined', params: ({ event }) => ({ signal: 'context_fetch' as const, at: event.at }) },
        },
      },
      after: { agentCheck: 'checking' },
    },
    checking: {
      on: watchCommands,
      invoke: {
        src: 'checkAgent',
        input: roomInput,
        onDone: [
          {
            guard: { type: 'presence', params: ({ event }) => ({ presence: event.output, is: 'present' as const }) },
            target: 'joined',
            actions: { type: 'noteJoined', params: { signal: 'room_check' as const } },
          },
          {
            guard: { type: 'roomLost', params: ({ event }) => ({ presence: event.output }) },
            target: 'idle',
            actions: { type: 'endCall', params: { endedBy: 'media_lost' as const } },
          },
          { guard: 'dispatchesLeft', target: 'redispatching' },
          { target: 'idle', actions: { type: 'endCall', params: { endedBy: 'no_agent' as const } } },
        ],
        onError: [
          {
            guard: 'checksUnanswered',
            target: 'idle',
            actions: { type: 'endCall', params: { endedBy: 'media_lost' as const } },
          },
          { target: 'awaiting', actions: { type: 'checkAgain', params: { unanswered: true } } },
        ],
      },
    },
    redispatching: {
      on: watchCommands,
      invoke: {
        src: 'replaceDispatch',
        input: ({ context }) => ({ ...roomInput({ context }), staleId: context.voice.dispatch_id }),
        onDone: {
          target: 'awaiting',
          actions: { type: 'noteRedispatch', params: ({ event }) => ({ dispatchId: event.output }) },
        },
        // Counted as an attempt all the same, so a media server that refuses dispatches ends the call in bounded time.
        onError: { target: 'awaiting', actions: { type: 'noteRedispatch', params: { dispatchId: null } } },
      },
    },
    joined: {
      on: {
        ...watchCommands,
        'agent.check': { target: 'rechecking', actions: { type: 'checkNow', params: { now: true } } },
      },
      after: { agentCheck: 'rechecking' },
    },
    rechecking: {
      on: watchCommands,
      invoke: {
        src: 'checkAgent',
        input: roomInput,
        onDone: [
          {
            guard: { type: 'presence', params: ({ event }) => ({ presence: event.output, is: 'present' as const }) },
            target: 'joined',
            actions: { type: 'checkAgain', params: { unanswered: false } },
          },
          {
            guard: { type: 'roomLost', params: ({ event }) => ({ presence: event.output }) },
            target: 'idle',
            actions: { type: 'endCall', params: { endedBy: 'media_lost' as const } },
          },
          { guard: 'roundLeft', target: 'redispatching', actions: 'noteAgentLeft' },
          {
            target: 'idle',
            actions: ['noteAgentLeft', { type: 'endCall', params: { endedBy: 'no_agent' as const } }],
          },
        ],
        onError: [
          {
            guard: 'checksUnanswered',
            target: 'idle',
            actions: { type: 'endCall', params: { endedBy: 'media_lost' as const } },
          },
          { target: 'joined', actions: { type: 'checkAgain', params: { unanswered: true } } },
        ],
      },
    },
  },
});
