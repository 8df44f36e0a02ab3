/**
 * The voice region: a start creates the room, finds or dispatches the agent and mints the user's
 * token; an active call ends on a stop or when nothing has been heard of it for the silence
 * timeout; a stop deletes the room. Voice commands that arrive meanwhile wait their turn.
 */
import { enqueueActions, raise } from 'xstate';
import { placeOfSession } from '../../domain/call-record.js';
import { clearedAfterVoice, windowScreen } from '../../domain/error-window.js';
import { idleTimerDeadline, rearmIdleTimer } from '../../domain/idle-timer.js';
import { mergeSdkConfig } from '../../domain/sdk-config.js';
import { coolDownAfterVoice } from '../../domain/trigger-suppression.js';
import type { VoiceDetails } from '../../domain/voice-session.js';
import { VoiceWarning, agentJoinWindowMs, participantIdentity } from '../../domain/voice-session.js';
import type { AgentWatch, VoiceSilence } from './session-context.js';
import { activity, currentRoom } from './session-context.js';
import type { VoiceStopCommand } from './machine-events.js';
import { reengagementSetup, sessionReengagement } from './session-reengagement.js';
import { roomInput } from './setup.js';
import type { IssuedToken } from './media-contract.js';
import { MAX_WAITING_VOICE_COMMANDS } from './media-contract.js';

export const voiceSetup = reengagementSetup.extend({
  actions: {
    beginStart: enqueueActions(({ context, event, enqueue }, params: { resumed: boolean }) => {
      if (event.type !== 'voice.start') return;
      const userId = event.user_id ?? context.user_id;
      const screen = event.screen ?? context.screen;
      const warnings: string[] = [];
      if (screen === null) warnings.push(VoiceWarning.missingScreenContext);
      if (!context.settings.mediaReady) warnings.push(VoiceWarning.mediaNotConfigured);
      enqueue.assign({
        user_id: userId,
        screen,
        screen_id: event.screen ?? context.screen_id,
        updated_at: event.at,
        voice: { ...context.voice, room: currentRoom(context) },
        voiceWork: {
          ...context.voiceWork,
          start: {
            command: event,
            resumed: params.resumed,
            identity: participantIdentity(userId, context.session_id),
            warnings,
            dispatchViaToken: false,
          },
        },
        // A resume belongs to the engagement running; anything else begins a new one.
        assistant_invocation_id:
          params.resumed && context.assistant_invocation_id !== null
            ? context.assistant_invocation_id
            : event.invocation_id,
      });
    }),
    noteRoomCreateFailed: enqueueActions(({ context, enqueue }) => {
      const start = context.voiceWork.start!;
      const warnings = [...start.warnings, VoiceWarning.roomCreateFailed, VoiceWarning.dispatchViaToken];
      enqueue.assign({ voiceWork: { ...context.voiceWork, start: { ...start, warnings, dispatchViaToken: true } } });
    }),
    keepDispatch: enqueueActions(({ context, enqueue }, params: { dispatchId: string | null }) => {
      enqueue.assign({ voice: { ...context.voice, dispatch_id: params.dispatchId } });
    }),
    /** A resume found no agent in the room: the dispatch it had was replaced by a new one. */
    noteStartRedispatched: enqueueActions(({ context, enqueue }, params: { dispatchId: string }) => {
      const start = context.voiceWork.start!;
      enqueue.assign({
        voice: { ...context.voice, dispatch_id: params.dispatchId },
        voiceWork: {
          ...context.voiceWork,
          start: { ...start, warnings: [...start.warnings, VoiceWarning.agentRedispatched], redispatched: true },
        },
      });
    }),
    noteDispatchFailed: enqueueActions(({ context, enqueue }) => {
      const start = context.voiceWork.start!;
      enqueue.assign({
        voice: { ...context.voice, dispatch_id: null },
        voiceWork: {
          ...context.voiceWork,
          start: { ...start, warnings: [...start.warnings, VoiceWarning.dispatchFailed] },
        },
      });
    }),
    finishStart: enqueueActions(({ context, enqueue }, issued: IssuedToken) => {
      const { command, resumed, warnings, dispatchViaToken, redispatched, identity } = context.voiceWork.start!;
      const room = currentRoom(context);
      const previous = context.agent_watch ?? null;
      // A call with media watches for its agent (docs/decisions/0032-an-agent-joins-or-the-call-ends.md):
      // from this start when it dispatched, or as it was when a resume kept the dispatch there.
      let agent_watch: AgentWatch | null = null;
      if (context.settings.mediaReady) {
        const attempts = resumed && previous !== null ? previous.attempts + 1 : 1;
        agent_watch =
          resumed && previous !== null && redispatched !== true
            ? previous
            : {
                dispatched_at: command.at,
                attempts,
                joined_at: null,
                via_token: dispatchViaToken,
                due_at: command.at + agentJoinWindowMs(context.settings.agentJoinMs, attempts),
                unanswered: 0,
                trace: command.trace,
              };
      }
      const voice: VoiceDetails = {
        ...context.voice,
        started_at: resumed ? (context.voice.started_at ?? command.at) : command.at,
        stopped_at: resumed ? context.voice.stopped_at : null,
      };
      // A start or a resume is a sign of life: the silence check counts from it.
      const voice_silence: VoiceSilence = {
        armed_at: command.at,
        delay_ms: context.settings.voiceSilenceMs,
        alive_at: command.at,
        trace: command.trace,
      };
      enqueue.assign({ voice, voiceWork: { ...context.voiceWork, start: null }, voice_silence, agent_watch });
      enqueue.raise(agent_watch === null ? { type: 'agent.unwatch' } : { type: 'agent.watch', at: command.at });
      enqueue.emit(
        activity(context, 'session_start', command.at, command.trace, {
          room,
          resumed,
          // Where the user is, and what failed there: the call record's start (docs/explanation/calls.md).
          ...placeOfSession(context.screen, context.errors, windowScreen),
          dispatch_id: voice.dispatch_id,
          warnings,
          assistant_invocation_id: context.assistant_invocation_id,
        }),
      );
      const assistantInvocationId = context.assistant_invocation_id ?? command.invocation_id;
      enqueue(() =>
        command.reply({
          session_id: context.session_id,
          room,
          token: issued.token,
          minted_for: { room, identity, sessionId: context.session_id, dispatchAgent: dispatchViaToken },
          media_url: issued.url,
          expires_in_sec: issued.expires_in_sec,
          warnings,
          resumed,
          assistant_invocation_id: assistantInvocationId,
        }),
      );
    }),

    beginStop: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'voice.stop') return;
      enqueue.assign({ voiceWork: { ...context.voiceWork, stop: { command: event, warnings: [] } } });
    }),
    noteVoiceAlive: enqueueActions(({ context, event, enqueue }) => {
      if (event.type === 'context.fetch' && context.voice_silence)
        enqueue.assign({ voice_silence: { ...context.voice_silence, alive_at: event.at } });
    }),
    rearmVoiceSilence: enqueueActions(({ context, enqueue }) => {
      const silence = context.voice_silence;
      if (silence)
        enqueue.assign({
          voice_silence: { ...silence, ...rearmIdleTimer(silence, silence.alive_at, context.settings.voiceSilenceMs) },
        });
    }),
    /** No client stopped it, but nothing has been heard of the call for the timeout: it ends as a stop would. */
    beginExpiry: enqueueActions(({ context, enqueue }) => {
      const silence = context.voice_silence!;
      const at = idleTimerDeadline(silence);
      const command: VoiceStopCommand = {
        type: 'voice.stop',
        at,
        trace: silence.trace,
        sdk_overrides: {},
        header_client_id: null,
        reply: () => undefined,
      };
      const silentSeconds = Math.floor((at - silence.alive_at) / 1000);
      enqueue.assign({
        voiceWork: { ...context.voiceWork, stop: { command, warnings: [], silentSeconds, endedBy: 'silence' } },
      });
    }),
    /** The agent watch found no agent after every dispatch, or the room gone: the call ends as a stop would. */
    beginEnd: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'voice.end') return;
      const trace = context.agent_watch?.trace ??
        context.voice_silence?.trace ?? { trace_id: 'voice_end', request_id: 'voice_end' };
      const command: VoiceStopCommand = {
        type: 'voice.stop',
        at: event.at,
        trace,
        sdk_overrides: {},
        header_client_id: null,
        reply: () => undefined,
      };
      enqueue.assign({ voiceWork: { ...context.voiceWork, stop: { command, warnings: [], endedBy: event.endedBy } } });
    }),
    noteRoomDeleteFailed: enqueueActions(({ context, enqueue }) => {
      const stop = context.voiceWork.stop!;
      enqueue.assign({
        voiceWork: {
          ...context.voiceWork,
          stop: { ...stop, warnings: [...stop.warnings, VoiceWarning.roomDeleteFailed] },
        },
      });
    }),
    finishStop: enqueueActions(({ context, enqueue }) => {
      const { command, warnings, silentSeconds, endedBy } = context.voiceWork.stop!;
      const voice: VoiceDetails = { ...context.voice, dispatch_id: null, stopped_at: command.at };
      enqueue.assign({
        voice,
        voiceWork: { ...context.voiceWork, stop: null },
        voice_silence: null,
        agent_watch: null,
      });
      enqueue.raise({ type: 'agent.unwatch' });
      // The user just hung up: the failures the call was about are no reason to offer it again,
      // and the next offer waits min_trigger_interval_seconds, as after a fired trigger. A call
      // that went silent ended that long ago, past both: what happened since still counts.
      if (endedBy === undefined) {
        const config = mergeSdkConfig(command.sdk_overrides, context.client_id ?? command.header_client_id);
        const trigger = coolDownAfterVoice(
          context.trigger,
          command.at,
          config.thresholds.min_trigger_interval_seconds * 1000,
        );
        enqueue.assign({ errors: clearedAfterVoice(context.errors), trigger });
        if (trigger !== context.trigger)
          enqueue.raise({ type: 'trigger.fired', cooldownMs: trigger.cooldown_until! - command.at });
      }
      const ended =
        endedBy === undefined
          ? {}
          : { ended_by: endedBy, ...(silentSeconds === undefined ? {} : { silent_seconds: silentSeconds }) };
      // A call the service ended (its silence check, its agent watch): that timer was due at `command.at`.
      const dueAt = endedBy === undefined ? undefined : command.at;
      const place = placeOfSession(context.screen, context.errors, windowScreen);
      enqueue.emit(
        activity(
          context,
          'session_stop',
          command.at,
          command.trace,
          {
            room: voice.room,
            was_active: true,
            warnings,
            ...ended,
            ...place,
            assistant_invocation_id: context.assistant_invocation_id,
          },
          dueAt,
        ),
      );
      enqueue.emit(
        activity(
          context,
          'reengagement',
          command.at,
          command.trace,
          { ...sessionReengagement(context, false, command.at), source: 'session_stop' },
          dueAt,
        ),
      );
      enqueue.raise({ type: 'reengagement.arm', at: command.at, trace: command.trace });
      enqueue(() => command.reply({ session_id: context.session_id, active: false, was_active: true, warnings }));
    }),
    stopInactive: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'voice.stop') return;
      enqueue.emit(
        activity(context, 'session_stop', event.at, event.trace, {
          room: context.voice.room,
          was_active: false,
          warnings: [],
        }),
      );
      enqueue(() => event.reply({ session_id: context.session_id, active: false, was_active: false, warnings: [] }));
    }),

    /** A voice command that arrives while media work runs waits its turn, or is refused when too many wait. */
    holdVoiceCommand: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'voice.start' && event.type !== 'voice.stop') return;
      if (context.voiceWork.waiting.length >= MAX_WAITING_VOICE_COMMANDS) {
        enqueue(() => event.reply({ busy: true }));
        return;
      }
      enqueue.assign({ voiceWork: { ...context.voiceWork, waiting: [...context.voiceWork.waiting, event] } });
    }),
    replayWaiting: enqueueActions(({ context, enqueue }) => {
      enqueue.assign({ voiceWork: { ...context.voiceWork, waiting: [] } });
      for (const command of context.voiceWork.waiting) enqueue.raise(command);
    }),
  },
});

export const voiceRegion = voiceSetup.createStateConfig({
  initial: 'inactive',
  states: {
    inactive: {
      on: {
        'voice.start': {
          target: 'starting',
          actions: [
            { type: 'beginStart', params: { resumed: false } },
            'touch',
            raise({ type: 'reengagement.cancel' }),
          ],
        },
        'voice.stop': { actions: ['stopInactive', 'touch'] },
        'session.restore': { guard: 'restoredVoiceActive', target: 'active' },
      },
    },
    starting: {
      initial: 'planning',
      on: {
        'voice.start': { actions: ['holdVoiceCommand', 'touch'] },
        'voice.stop': { actions: ['holdVoiceCommand', 'touch'] },
      },
      states: {
        planning: {
          always: [{ guard: 'mediaReady', target: 'creatingRoom' }, { target: 'mintingToken' }],
        },
        creatingRoom: {
          invoke: {
            src: 'createRoom',
            input: roomInput,
            // A resume looks for the agent first: a dispatch that is listed is no sign an agent came.
            onDone: [{ guard: 'resumingWatchedCall', target: 'checkingAgent' }, { target: 'findingAgent' }],
            // No dispatch call: the token carries the dispatch, and the media server honours
            // it only when the user's join creates the room.
            onError: { target: 'mintingToken', actions: 'noteRoomCreateFailed' },
          },
        },
        checkingAgent: {
          invoke: {
            src: 'checkAgent',
            input: roomInput,
            onDone: [
              {
                guard: { type: 'agentMissing', params: ({ event }) => ({ presence: event.output }) },
                target: 'replacingDispatch',
              },
              { target: 'findingAgent' },
            ],
            // Unknown whether an agent is there: keep the dispatch, as a start that cannot list would.
            onError: { target: 'findingAgent' },
          },
        },
        replacingDispatch: {
          invoke: {
            src: 'replaceDispatch',
            input: ({ context }) => ({
              room: currentRoom(context),
              sessionId: context.session_id,
              staleId: context.voice.dispatch_id,
            }),
            onDone: {
              target: 'mintingToken',
              actions: { type: 'noteStartRedispatched', params: ({ event }) => ({ dispatchId: event.output }) },
            },
            onError: { target: 'mintingToken', actions: 'noteDispatchFailed' },
          },
        },
        findingAgent: {
          // Listing first is what keeps one agent per room: a dispatch that succeeded behind a
          // timeout, or one from before a restart, is adopted rather than doubled.
          invoke: {
            src: 'findAgentDispatch',
            input: ({ context }) => ({ room: currentRoom(context), preferredId: context.voice.dispatch_id }),
            onDone: [
              {
                guard: { type: 'dispatchFound', params: ({ event }) => ({ dispatchId: event.output }) },
                target: 'mintingToken',
                actions: { type: 'keepDispatch', params: ({ event }) => ({ dispatchId: event.output }) },
              },
              { target: 'dispatchingAgent' },
            ],
            // Unknown whether an agent is there: dispatching could make two.
            onError: [
              { guard: 'dispatchRecorded', target: 'mintingToken' },
              { target: 'mintingToken', actions: 'noteDispatchFailed' },
            ],
          },
        },
        dispatchingAgent: {
          invoke: {
            src: 'dispatchAgent',
            input: roomInput,
            onDone: {
              target: 'mintingToken',
              actions: { type: 'keepDispatch', params: ({ event }) => ({ dispatchId: event.output }) },
            },
            onError: { target: 'mintingToken', actions: 'noteDispatchFailed' },
          },
        },
        mintingToken: {
          // Minting is local and cannot fail for a media reason; a failure is a bug, which
          // the supervisor contains (500, session discarded), hence no onError.
          invoke: {
            src: 'mintToken',
            input: ({ context }) => {
              const start = context.voiceWork.start!;
              return {
                room: currentRoom(context),
                identity: start.identity,
                sessionId: context.session_id,
                dispatchAgent: start.dispatchViaToken,
              };
            },
            onDone: {
              target: '#session.voice.active',
              actions: [{ type: 'finishStart', params: ({ event }) => event.output }, 'replayWaiting'],
            },
          },
        },
      },
    },
    active: {
      on: {
        // The agent watch rests while a resume looks for the agent itself; the start re-arms it.
        'voice.start': {
          target: 'starting',
          actions: [{ type: 'beginStart', params: { resumed: true } }, 'touch', raise({ type: 'agent.unwatch' })],
        },
        'voice.stop': { target: 'stopping', actions: ['beginStop', 'touch'] },
        'voice.end': { target: 'stopping', actions: 'beginEnd' },
      },
      // A stop the client never sent (lost, or the app killed) must not hold the session in
      // voice for ever: triggers held back as assistant_active, and never evicted.
      after: {
        voiceSilenceCheck: [
          { guard: 'voiceSilent', target: 'stopping', actions: 'beginExpiry' },
          { target: 'active', reenter: true, actions: 'rearmVoiceSilence' },
        ],
      },
    },
    stopping: {
      initial: 'planning',
      on: {
        'voice.start': { actions: ['holdVoiceCommand', 'touch'] },
        'voice.stop': { actions: ['holdVoiceCommand', 'touch'] },
      },
      states: {
        planning: {
          always: [{ guard: 'mediaReady', target: 'deletingRoom' }, { target: 'done' }],
        },
        deletingRoom: {
          invoke: {
            src: 'deleteRoom',
            input: roomInput,
            onDone: { target: 'done' },
            onError: { target: 'done', actions: 'noteRoomDeleteFailed' },
          },
        },
        done: { type: 'final' },
      },
      onDone: { target: 'inactive', actions: ['finishStop', 'replayWaiting'] },
    },
  },
});
