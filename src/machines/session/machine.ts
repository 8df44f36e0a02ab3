/**
 * The session machine: `setup()` (its actors, delays, guards and actions) and the four parallel
 * regions it assembles: voice (start, active, stop with media work), trigger (cooldown), presence
 * (idle eviction) and reengagement. The rules it applies live beside it: decisions.ts, ingest.ts,
 * reengagement.ts, persistence.ts.
 */
import type { SnapshotFrom } from 'xstate';
import { and, assign, emit, enqueueActions, fromPromise, not, raise, setup, stateIn } from 'xstate';
import { buildAgentContext } from '../../domain/agent-context.js';
import type { Dropoff } from '../../domain/dropoff.js';
import { clearedAfterVoice, onScreen } from '../../domain/error-window.js';
import type { SessionFlow } from '../../domain/flow.js';
import { flowProgress, flowSteps, stepFacts } from '../../domain/flow.js';
import { idleForTtl, idleTimerDeadline, rearmIdleTimer } from '../../domain/idle-timer.js';
import { mergeSdkConfig } from '../../domain/sdk-config.js';
import { coolDownAfterVoice } from '../../domain/trigger-suppression.js';
import type { VoiceDetails } from '../../domain/voice-session.js';
import { VoiceWarning, participantIdentity } from '../../domain/voice-session.js';
import type { SessionContext, SessionInput, SessionMachineEvent, VoiceSilence } from './context.js';
import { activity, currentRoom, newContext } from './context.js';
import type { HoldBack } from './decisions.js';
import { decidePopup, decideTrigger } from './decisions.js';
import type { SessionEmitted, VoiceStopCommand } from './events.js';
import { ingestStep } from './ingest.js';
import { restoredContext } from './persistence.js';
import { reengagementDeadline, sessionReengagement } from './reengagement.js';
import type { FindAgentInput, IssuedToken, RoomInput, TokenInput } from './voice.js';
import { MAX_WAITING_VOICE_COMMANDS } from './voice.js';

const unprovided = () => Promise.reject(new Error('media actors are provided at bootstrap'));

const roomInput = ({ context }: { context: SessionContext }): RoomInput => ({ room: currentRoom(context), sessionId: context.session_id });

/**
 * One KYC user's session. Pure: time arrives on each command (`at`), timers are named
 * delays, media work is invoked promise actors provided at bootstrap, and everything the
 * world should know leaves as an emission.
 */
export const sessionMachine = setup({
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
  },
  delays: {
    idleCheck: ({ context }) => context.idle_timer.delay_ms,
    voiceSilenceCheck: ({ context }) => context.voice_silence?.delay_ms ?? context.settings.voiceSilenceMs,
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
    idleForTtl: ({ context }) => idleForTtl(context.idle_timer, context.last_touched_at, context.settings.idleTtlMs),
    voiceSilent: ({ context }) => {
      const silence = context.voice_silence;
      return silence ? idleForTtl(silence, silence.alive_at, context.settings.voiceSilenceMs) : false;
    },
    mediaReady: ({ context }) => context.settings.mediaReady,
    dispatchRecorded: ({ context }) => context.voice.dispatch_id !== null,
    dispatchFound: (_, params: { dispatchId: string | null }) => params.dispatchId !== null,
    restoredVoiceActive: ({ event }) => event.type === 'session.restore' && event.voice === 'active',
    restoredCoolingDown: ({ context, event }) => event.type === 'session.restore' && (context.trigger.cooldown_until ?? 0) > event.at,
    restoredReengagement: ({ context, event }) => event.type === 'session.restore' && context.reengagement !== null,
  },
  actions: {
    // One action, one assign: each assign clones the machine snapshot, and an event is the
    // commonest command by far (BENCHMARKS.md has the measurement). `ingestStep` is the whole of
    // it; the session logic of the supervisor runs the same function directly (direct-ingest.ts).
    ingest: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'session.ingest') return;
      const step = ingestStep(context, event);
      // Given as a function, so XState takes the object as it is instead of copying it key by key.
      enqueue.assign(() => step.context);
      for (const emitted of step.emitted) enqueue.emit(emitted);
      // Only an armed reengagement timer listens; raising for nobody costs a whole microstep per event.
      if (step.userActivity && context.reengagement) enqueue.raise({ type: 'user.activity', at: event.at });
      const reply = event.reply;
      enqueue(() => reply(step.result));
    }),
    serveContext: enqueueActions(({ context, event, enqueue }, params: { voiceActive: boolean }) => {
      if (event.type !== 'context.fetch') return;
      const agentContext = buildAgentContext(context, params.voiceActive, event.sources);
      enqueue.emit({
        type: 'activity',
        draft: {
          kind: 'voice_agent_context_fetch',
          at: event.at,
          session_id: context.session_id,
          user_id: context.user_id,
          trace: event.trace,
          payload: { screen: context.screen, kb_step: agentContext.context.kyc_kb.step_id, prompt_chars: agentContext.system_prompt.length },
        },
      });
      const reply = event.reply;
      enqueue(() => reply(agentContext));
    }),
    evaluateTrigger: enqueueActions(({ context, event, enqueue }, params: { holdBack: HoldBack }) => {
      if (event.type !== 'trigger.evaluate') return;
      const outcome = decideTrigger(context, event, params.holdBack);
      enqueue.assign(outcome.patch);
      if (outcome.cooldownMs > 0) enqueue.raise({ type: 'trigger.fired', cooldownMs: outcome.cooldownMs });
      for (const emitted of outcome.emitted) enqueue.emit(emitted);
      const reply = event.reply;
      enqueue(() => reply(outcome.decision));
    }),
    evaluatePopup: enqueueActions(({ context, event, enqueue }, params: { holdBack: HoldBack }) => {
      if (event.type !== 'popup.evaluate') return;
      const outcome = decidePopup(context, event, params.holdBack === 'assistant_active', false);
      enqueue.assign(outcome.patch);
      for (const emitted of outcome.emitted) enqueue.emit(emitted);
      const reply = event.reply;
      enqueue(() => reply(outcome.decision));
    }),
    evaluateSurfaces: enqueueActions(({ context, event, enqueue }, params: { holdBack: HoldBack }) => {
      if (event.type !== 'assistant.evaluate') return;
      const trigger = decideTrigger(context, event, params.holdBack);
      // The popup sees the session as the trigger left it; an offer of voice is prompt enough.
      const popup = decidePopup({ ...context, ...trigger.patch }, event, params.holdBack === 'assistant_active', trigger.decision.trigger);
      enqueue.assign({ ...trigger.patch, ...popup.patch });
      if (trigger.cooldownMs > 0) enqueue.raise({ type: 'trigger.fired', cooldownMs: trigger.cooldownMs });
      for (const emitted of [...trigger.emitted, ...popup.emitted]) enqueue.emit(emitted);
      const reply = event.reply;
      enqueue(() => reply({ trigger: trigger.decision, popup: popup.decision }));
    }),
    setFlow: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'flow.set') return;
      const { at } = event;
      let flow: SessionFlow | null;
      if (event.step_sequence === null) flow = { flow_key: event.flow_key, steps: context.flow?.flow_key === event.flow_key ? context.flow.steps : [] };
      else flow = event.step_sequence.length === 0 ? null : { flow_key: event.flow_key, steps: flowSteps(event.step_sequence) };
      const screen = event.current_step ?? context.screen;
      enqueue.assign({
        flow,
        screen,
        screen_id: event.current_step ?? context.screen_id,
        errors: onScreen(context.errors, screen),
        user_id: context.user_id ?? event.user_id,
        client_id: context.client_id ?? event.client_id,
        updated_at: at,
      });
      const result = { flow, ...stepFacts(event.knowledge_base, screen), progress: flowProgress(flow, screen) };
      const reply = event.reply;
      enqueue(() => reply(result));
    }),
    registerDropoff: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'dropoff.register') return;
      const dropoff: Dropoff = { registered_at: event.at, has_dialable_phone: event.has_dialable_phone, phone_last4: event.phone_last4, reason: event.reason };
      enqueue.assign({ dropoff, user_id: context.user_id ?? event.user_id, updated_at: event.at });
      const { has_dialable_phone, phone_last4, reason } = dropoff;
      enqueue.emit(activity(context, 'dropoff_registered', event.at, event.trace, { has_dialable_phone, phone_last4, reason }));
      enqueue.raise({ type: 'reengagement.arm', at: event.at, trace: event.trace });
      const reply = event.reply;
      enqueue(() => reply({ registered: true, has_dialable_phone: dropoff.has_dialable_phone }));
    }),
    cancelDropoff: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'dropoff.cancel') return;
      const cancelled = context.dropoff !== null;
      if (cancelled) {
        enqueue.assign({ dropoff: null, updated_at: event.at });
        enqueue.emit(activity(context, 'dropoff_cancelled', event.at, event.trace, { by: 'client' }));
      }
      const reply = event.reply;
      enqueue(() => reply({ cancelled }));
    }),
    // A command only notes the time: restarting the idle timer on every command would cost a
    // microstep and a timer swap per event (see idle-timer.ts).
    touch: assign({ last_touched_at: ({ context, event }) => ('at' in event ? event.at : context.last_touched_at) }),
    rearmIdleTimer: assign({ idle_timer: ({ context }) => rearmIdleTimer(context.idle_timer, context.last_touched_at, context.settings.idleTtlMs) }),
    announceExpiry: emit(({ context }) => ({ type: 'session.expired' as const, sessionId: context.session_id })),

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
          start: { command: event, resumed: params.resumed, identity: participantIdentity(userId, context.session_id), warnings, dispatchViaToken: false },
        },
        // A resume belongs to the engagement running; anything else begins a new one.
        assistant_invocation_id: params.resumed && context.assistant_invocation_id !== null ? context.assistant_invocation_id : event.invocation_id,
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
    noteDispatchFailed: enqueueActions(({ context, enqueue }) => {
      const start = context.voiceWork.start!;
      enqueue.assign({
        voice: { ...context.voice, dispatch_id: null },
        voiceWork: { ...context.voiceWork, start: { ...start, warnings: [...start.warnings, VoiceWarning.dispatchFailed] } },
      });
    }),
    finishStart: enqueueActions(({ context, enqueue }, issued: IssuedToken) => {
      const { command, resumed, warnings } = context.voiceWork.start!;
      const room = currentRoom(context);
      const voice: VoiceDetails = {
        ...context.voice,
        started_at: resumed ? (context.voice.started_at ?? command.at) : command.at,
        stopped_at: resumed ? context.voice.stopped_at : null,
      };
      // A start or a resume is a sign of life: the silence check counts from it.
      const voice_silence: VoiceSilence = { armed_at: command.at, delay_ms: context.settings.voiceSilenceMs, alive_at: command.at, trace: command.trace };
      enqueue.assign({ voice, voiceWork: { ...context.voiceWork, start: null }, voice_silence });
      enqueue.emit(
        activity(context, 'session_start', command.at, command.trace, {
          room,
          resumed,
          screen: context.screen,
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
      if (event.type === 'context.fetch' && context.voice_silence) enqueue.assign({ voice_silence: { ...context.voice_silence, alive_at: event.at } });
    }),
    rearmVoiceSilence: enqueueActions(({ context, enqueue }) => {
      const silence = context.voice_silence;
      if (silence) enqueue.assign({ voice_silence: { ...silence, ...rearmIdleTimer(silence, silence.alive_at, context.settings.voiceSilenceMs) } });
    }),
    /** No client stopped it, but nothing has been heard of the call for the timeout: it ends as a stop would. */
    beginExpiry: enqueueActions(({ context, enqueue }) => {
      const silence = context.voice_silence!;
      const at = idleTimerDeadline(silence);
      const command: VoiceStopCommand = { type: 'voice.stop', at, trace: silence.trace, sdk_overrides: {}, header_client_id: null, reply: () => undefined };
      const silentSeconds = Math.floor((at - silence.alive_at) / 1000);
      enqueue.assign({ voiceWork: { ...context.voiceWork, stop: { command, warnings: [], silentSeconds } } });
    }),
    noteRoomDeleteFailed: enqueueActions(({ context, enqueue }) => {
      const stop = context.voiceWork.stop!;
      enqueue.assign({ voiceWork: { ...context.voiceWork, stop: { ...stop, warnings: [...stop.warnings, VoiceWarning.roomDeleteFailed] } } });
    }),
    finishStop: enqueueActions(({ context, enqueue }) => {
      const { command, warnings, silentSeconds } = context.voiceWork.stop!;
      const voice: VoiceDetails = { ...context.voice, dispatch_id: null, stopped_at: command.at };
      enqueue.assign({ voice, voiceWork: { ...context.voiceWork, stop: null }, voice_silence: null });
      // The user just hung up: the failures the call was about are no reason to offer it again,
      // and the next offer waits min_trigger_interval_seconds, as after a fired trigger. A call
      // that went silent ended that long ago, past both: what happened since still counts.
      if (silentSeconds === undefined) {
        const config = mergeSdkConfig(command.sdk_overrides, context.client_id ?? command.header_client_id);
        const trigger = coolDownAfterVoice(context.trigger, command.at, config.thresholds.min_trigger_interval_seconds * 1000);
        enqueue.assign({ errors: clearedAfterVoice(context.errors), trigger });
        if (trigger !== context.trigger) enqueue.raise({ type: 'trigger.fired', cooldownMs: trigger.cooldown_until! - command.at });
      }
      const ended = silentSeconds === undefined ? {} : { ended_by: 'silence', silent_seconds: silentSeconds };
      enqueue.emit(activity(context, 'session_stop', command.at, command.trace, { room: voice.room, was_active: true, warnings, ...ended }));
      enqueue.emit(activity(context, 'reengagement', command.at, command.trace, { ...sessionReengagement(context, false, command.at), source: 'session_stop' }));
      enqueue.raise({ type: 'reengagement.arm', at: command.at, trace: command.trace });
      enqueue(() => command.reply({ session_id: context.session_id, active: false, was_active: true, warnings }));
    }),
    stopInactive: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'voice.stop') return;
      enqueue.emit(activity(context, 'session_stop', event.at, event.trace, { room: context.voice.room, was_active: false, warnings: [] }));
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

    armReengagement: enqueueActions(({ event, enqueue }) => {
      if (event.type === 'reengagement.arm') enqueue.assign({ reengagement: { armed_at: event.at, trace: event.trace } });
    }),
    rearmReengagement: enqueueActions(({ context, event, enqueue }) => {
      if (event.type === 'user.activity' && context.reengagement) enqueue.assign({ reengagement: { ...context.reengagement, armed_at: event.at } });
    }),
    recordReengagement: enqueueActions(({ context, enqueue }) => {
      const timer = context.reengagement;
      if (!timer) return;
      // The timer fires the full inactivity period after it was last armed: that is "now".
      const firedAt = reengagementDeadline(context, timer);
      enqueue.emit(activity(context, 'reengagement', firedAt, timer.trace, { ...sessionReengagement(context, false, firedAt), source: 'timer' }));
    }),
    clearReengagement: enqueueActions(({ enqueue }) => enqueue.assign({ reengagement: null })),
  },
}).createMachine({
  id: 'session',
  type: 'parallel',
  context: ({ input }) => (input.restored ? restoredContext(input.restored, input.settings, input.at) : newContext(input)),
  on: {
    'session.ingest': { actions: 'ingest' },
    'context.fetch': [
      { guard: 'voiceInactive', actions: [{ type: 'serveContext', params: { voiceActive: false } }, 'touch'] },
      { actions: [{ type: 'serveContext', params: { voiceActive: true } }, 'noteVoiceAlive', 'touch'] },
    ],
    // Suppressions that come from the state, in order of precedence; the action adds already_prompted.
    'trigger.evaluate': [
      { guard: 'assistantActive', actions: [{ type: 'evaluateTrigger', params: { holdBack: 'assistant_active' } }, 'touch'] },
      { guard: 'triggerCoolingDown', actions: [{ type: 'evaluateTrigger', params: { holdBack: 'cooldown' } }, 'touch'] },
      { actions: [{ type: 'evaluateTrigger', params: { holdBack: null } }, 'touch'] },
    ],
    'popup.evaluate': [
      { guard: 'assistantActive', actions: [{ type: 'evaluatePopup', params: { holdBack: 'assistant_active' } }, 'touch'] },
      { actions: [{ type: 'evaluatePopup', params: { holdBack: null } }, 'touch'] },
    ],
    'assistant.evaluate': [
      { guard: 'assistantActive', actions: [{ type: 'evaluateSurfaces', params: { holdBack: 'assistant_active' } }, 'touch'] },
      { guard: 'triggerCoolingDown', actions: [{ type: 'evaluateSurfaces', params: { holdBack: 'cooldown' } }, 'touch'] },
      { actions: [{ type: 'evaluateSurfaces', params: { holdBack: null } }, 'touch'] },
    ],
    'flow.set': { actions: ['setFlow', 'touch'] },
    'dropoff.register': { actions: ['registerDropoff', 'touch'] },
    'dropoff.cancel': { actions: ['cancelDropoff', 'touch'] },
  },
  states: {
    voice: {
      initial: 'inactive',
      states: {
        inactive: {
          on: {
            'voice.start': {
              target: 'starting',
              actions: [{ type: 'beginStart', params: { resumed: false } }, 'touch', raise({ type: 'reengagement.cancel' })],
            },
            'voice.stop': { actions: ['stopInactive', 'touch'] },
            'session.restore': { guard: 'restoredVoiceActive', target: 'active' },
          },
        },
        starting: {
          initial: 'planning',
          on: { 'voice.start': { actions: ['holdVoiceCommand', 'touch'] }, 'voice.stop': { actions: ['holdVoiceCommand', 'touch'] } },
          states: {
            planning: {
              always: [{ guard: 'mediaReady', target: 'creatingRoom' }, { target: 'mintingToken' }],
            },
            creatingRoom: {
              invoke: {
                src: 'createRoom',
                input: roomInput,
                onDone: { target: 'findingAgent' },
                // No dispatch call: the token carries the dispatch, and the media server honours
                // it only when the user's join creates the room.
                onError: { target: 'mintingToken', actions: 'noteRoomCreateFailed' },
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
                onError: [{ guard: 'dispatchRecorded', target: 'mintingToken' }, { target: 'mintingToken', actions: 'noteDispatchFailed' }],
              },
            },
            dispatchingAgent: {
              invoke: {
                src: 'dispatchAgent',
                input: roomInput,
                onDone: { target: 'mintingToken', actions: { type: 'keepDispatch', params: ({ event }) => ({ dispatchId: event.output }) } },
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
                  return { room: currentRoom(context), identity: start.identity, sessionId: context.session_id, dispatchAgent: start.dispatchViaToken };
                },
                onDone: { target: '#session.voice.active', actions: [{ type: 'finishStart', params: ({ event }) => event.output }, 'replayWaiting'] },
              },
            },
          },
        },
        active: {
          on: {
            'voice.start': { target: 'starting', actions: [{ type: 'beginStart', params: { resumed: true } }, 'touch'] },
            'voice.stop': { target: 'stopping', actions: ['beginStop', 'touch'] },
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
          on: { 'voice.start': { actions: ['holdVoiceCommand', 'touch'] }, 'voice.stop': { actions: ['holdVoiceCommand', 'touch'] } },
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
    },
    trigger: {
      initial: 'ready',
      states: {
        ready: { on: { 'trigger.fired': 'cooldown', 'session.restore': { guard: 'restoredCoolingDown', target: 'cooldown' } } },
        // A voice session's end while cooling down starts the cooldown again, from the stop.
        cooldown: { after: { triggerCooldown: 'ready' }, on: { 'trigger.fired': { target: 'cooldown', reenter: true } } },
      },
    },
    presence: {
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
    },
    reengagement: {
      initial: 'idle',
      states: {
        idle: {
          on: {
            'reengagement.arm': { target: 'armed', actions: 'armReengagement' },
            'session.restore': { guard: 'restoredReengagement', target: 'armed' },
          },
        },
        armed: {
          on: {
            'reengagement.arm': { target: 'armed', reenter: true, actions: 'armReengagement' },
            'user.activity': { target: 'armed', reenter: true, actions: 'rearmReengagement' },
            'reengagement.cancel': { target: 'idle', actions: 'clearReengagement' },
          },
          after: {
            reengagementInactivity: { target: 'idle', actions: ['recordReengagement', 'clearReengagement'] },
          },
        },
      },
    },
  },
});

export type SessionMachine = typeof sessionMachine;
export type SessionSnapshot = SnapshotFrom<SessionMachine>;
