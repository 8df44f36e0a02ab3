/**
 * The commands every state takes, at the machine's root: an SDK event, a context fetch, the
 * trigger and popup evaluations, the flow and the drop-off. What comes from the state (an
 * assistant active, a cooldown running) is chosen by guard; the rules are decisions.ts and ingest.ts.
 */
import { enqueueActions } from 'xstate';
import { buildAgentContext, contextVersion } from '../../domain/agent-context.js';
import type { Dropoff } from '../../domain/dropoff.js';
import { onScreen } from '../../domain/error-window.js';
import type { SessionFlow } from '../../domain/flow.js';
import { flowProgress, flowSteps, stepFacts } from '../../domain/flow.js';
import { activity } from './session-context.js';
import type { HoldBack } from './prompt-decisions.js';
import { decidePopup, decideTrigger } from './prompt-decisions.js';
import { ingestStep } from './ingest-step.js';
import { agentWatchSetup } from './agent-watch.js';

export const commandSetup = agentWatchSetup.extend({
  actions: {
    /**
     * Our agent fetches its context only once in the room (agent/job.ts): the first fetch of a call
     * is its join. One that names a dispatch the call has since replaced is a late job on its way
     * out, not the agent awaited (docs/decisions/0032-an-agent-joins-or-the-call-ends.md).
     */
    noteAgentHeard: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'context.fetch' || context.agent_watch?.joined_at !== null) return;
      // A command journaled before the field existed has none: it counts, as every fetch did then.
      const said = event.dispatch_id ?? null;
      if (said !== null && said !== context.voice.dispatch_id) return;
      enqueue.raise({ type: 'agent.heard', at: event.at });
    }),
    // One action, one assign: each assign clones the machine snapshot, and an event is the
    // commonest command by far (git show d1df1cf:docs/benchmark-history.md has the measurement). `ingestStep` is the whole of
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
          payload: {
            screen: context.screen,
            kb_step: agentContext.context.kyc_kb.step_id,
            prompt_chars: agentContext.system_prompt.length,
            // Which context the agent read: the call record lists each (docs/explanation/calls.md).
            context_version: contextVersion(agentContext),
          },
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
      const popup = decidePopup(
        { ...context, ...trigger.patch },
        event,
        params.holdBack === 'assistant_active',
        trigger.decision.trigger,
      );
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
      if (event.step_sequence === null)
        flow = { flow_key: event.flow_key, steps: context.flow?.flow_key === event.flow_key ? context.flow.steps : [] };
      else
        flow =
          event.step_sequence.length === 0 ? null : { flow_key: event.flow_key, steps: flowSteps(event.step_sequence) };
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
      const dropoff: Dropoff = {
        registered_at: event.at,
        has_dialable_phone: event.has_dialable_phone,
        phone_last4: event.phone_last4,
        reason: event.reason,
      };
      enqueue.assign({ dropoff, user_id: context.user_id ?? event.user_id, updated_at: event.at });
      const { has_dialable_phone, phone_last4, reason } = dropoff;
      enqueue.emit(
        activity(context, 'dropoff_registered', event.at, event.trace, { has_dialable_phone, phone_last4, reason }),
      );
      enqueue.raise({ type: 'reengagement.arm', at: event.at, trace: event.trace });
      const reply = event.reply;
      enqueue(() => reply({ registered: true, has_dialable_phone: dropoff.has_dialable_phone }));
    }),
    recordConsent: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'consent.record') return;
      const { decision, notice_version, language } = event;
      enqueue.assign({ updated_at: event.at });
      enqueue.emit(activity(context, 'consent', event.at, event.trace, { decision, notice_version, language }));
      const reply = event.reply;
      enqueue(() =>
        reply({ session_id: context.session_id, decision, notice_version, language, recorded_at_ms: event.at }),
      );
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
  },
});

export const rootCommands = commandSetup.createStateConfig({
  on: {
    'session.ingest': { actions: 'ingest' },
    'context.fetch': [
      { guard: 'voiceInactive', actions: [{ type: 'serveContext', params: { voiceActive: false } }, 'touch'] },
      {
        actions: [{ type: 'serveContext', params: { voiceActive: true } }, 'noteVoiceAlive', 'noteAgentHeard', 'touch'],
      },
    ],
    // Suppressions that come from the state, in order of precedence; the action adds already_prompted.
    'trigger.evaluate': [
      {
        guard: 'assistantActive',
        actions: [{ type: 'evaluateTrigger', params: { holdBack: 'assistant_active' } }, 'touch'],
      },
      {
        guard: 'triggerCoolingDown',
        actions: [{ type: 'evaluateTrigger', params: { holdBack: 'cooldown' } }, 'touch'],
      },
      { actions: [{ type: 'evaluateTrigger', params: { holdBack: null } }, 'touch'] },
    ],
    'popup.evaluate': [
      {
        guard: 'assistantActive',
        actions: [{ type: 'evaluatePopup', params: { holdBack: 'assistant_active' } }, 'touch'],
      },
      { actions: [{ type: 'evaluatePopup', params: { holdBack: null } }, 'touch'] },
    ],
    'assistant.evaluate': [
      {
        guard: 'assistantActive',
        actions: [{ type: 'evaluateSurfaces', params: { holdBack: 'assistant_active' } }, 'touch'],
      },
      {
        guard: 'triggerCoolingDown',
        actions: [{ type: 'evaluateSurfaces', params: { holdBack: 'cooldown' } }, 'touch'],
      },
      { actions: [{ type: 'evaluateSurfaces', params: { holdBack: null } }, 'touch'] },
    ],
    'flow.set': { actions: ['setFlow', 'touch'] },
    'dropoff.register': { actions: ['registerDropoff', 'touch'] },
    'dropoff.cancel': { actions: ['cancelDropoff', 'touch'] },
    'consent.record': { actions: ['recordConsent', 'touch'] },
  },
}).on;
