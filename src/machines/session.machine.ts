import { emit, enqueueActions, not, raise, setup, stateIn } from 'xstate';
import { buildAgentContext } from '../domain/agent-context.js';
import { mergeSdkConfig } from '../domain/sdk-config.js';
import type { SessionRecord } from '../domain/session-record.js';
import { applyEvent, eventActivityPayload, newSessionRecord } from '../domain/session-record.js';
import { evaluateTriggerPolicy, triggerActivityPayload } from '../domain/trigger-policy.js';
import type { TriggerMemory } from '../domain/trigger-suppression.js';
import { newTriggerMemory, rememberPrompt, suppressTrigger, wasPrompted } from '../domain/trigger-suppression.js';
import type { SessionCommand, SessionEmitted } from './session.events.js';

export interface SessionSettings {
  /** `integration.schema_registry`: when off, screen schemas are neither stored nor announced. */
  schemaRegistry: boolean;
  /** Lower-cased screen ids that count as critical for the trigger policy (`CRITICAL_STEPS`). */
  criticalSteps: string[];
}

export interface SessionInput {
  sessionId: string;
  at: number;
  settings: SessionSettings;
}

export interface SessionContext extends SessionRecord {
  settings: SessionSettings;
  trigger: TriggerMemory;
}

/** Internal: a trigger fired, so the trigger region cools down for `cooldownMs`. */
type TriggerFired = { type: 'trigger.fired'; cooldownMs: number };

/** Internal: a command arrived, so the idle-eviction timer starts over. */
type PresenceTouch = { type: 'presence.touch' };

/**
 * One KYC user's session. Pure: time arrives on each command (`at`), timers are named
 * delays provided at bootstrap, and everything the world should know leaves as an emission.
 */
export const sessionMachine = setup({
  types: {
    context: {} as SessionContext,
    events: {} as SessionCommand | PresenceTouch | TriggerFired,
    emitted: {} as SessionEmitted,
    input: {} as SessionInput,
  },
  delays: {
    // Replaced at bootstrap with SESSION_IDLE_TTL_SECONDS.
    idleTtl: 86_400_000,
    // The tenant's min_trigger_interval_seconds at the moment the trigger fired.
    triggerCooldown: ({ event }) => (event.type === 'trigger.fired' ? event.cooldownMs : 0),
  },
  guards: {
    voiceInactive: stateIn({ voice: 'inactive' }),
    // Starting and stopping count as active: a prompt then would talk over an assistant coming or going.
    assistantActive: not(stateIn({ voice: 'inactive' })),
    triggerCoolingDown: stateIn({ trigger: 'cooldown' }),
  },
  actions: {
    ingest: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'session.ingest') return;
      const outcome = applyEvent(context, event.event, { at: event.at, schemaRegistry: context.settings.schemaRegistry });
      enqueue.assign({ ...outcome.record, settings: context.settings });
      const base = { at: event.at, session_id: context.session_id, user_id: outcome.record.user_id, trace: event.trace };
      enqueue.emit({ type: 'activity', draft: { ...base, kind: 'event', payload: eventActivityPayload(outcome.stored, outcome.warnings) } });
      if (outcome.schemaPush) {
        enqueue.emit({ type: 'activity', draft: { ...base, kind: 'schema_push', payload: { ...outcome.schemaPush } } });
      }
      const reply = event.reply;
      enqueue(() => reply({ ingested_at_ms: event.at, warnings: outcome.warnings }));
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
    evaluateTrigger: enqueueActions(({ context, event, enqueue }, params: { holdBack: 'assistant_active' | 'cooldown' | null }) => {
      if (event.type !== 'trigger.evaluate') return;
      const { at } = event;
      const identity = { user_id: context.user_id ?? event.user_id, client_id: context.client_id ?? event.client_id };
      if (identity.user_id !== context.user_id || identity.client_id !== context.client_id) enqueue.assign({ ...identity, updated_at: at });
      const clientId = identity.client_id ?? event.header_client_id;
      const config = mergeSdkConfig(event.sdk_overrides, clientId);
      const signals = { ...event.signals, screen: event.signals.screen ?? context.screen ?? undefined };
      const matched = evaluateTriggerPolicy(signals, { config, criticalSteps: context.settings.criticalSteps, schemas: context.schemas });
      const decision = suppressTrigger(matched, {
        assistantActive: params.holdBack === 'assistant_active',
        cooldownRemainingMs: params.holdBack === 'cooldown' ? (context.trigger.cooldown_until ?? at) - at : undefined,
        alreadyPrompted: !config.features.allow_multiple_assistant_prompt && wasPrompted(context.trigger, signals.screen),
      });
      if (decision.trigger) {
        const cooldownMs = config.thresholds.min_trigger_interval_seconds * 1000;
        enqueue.assign({ last_trigger_at: at, updated_at: at, trigger: rememberPrompt(context.trigger, signals.screen, at, cooldownMs) });
        if (cooldownMs > 0) enqueue.raise({ type: 'trigger.fired', cooldownMs });
      }
      const draft = { kind: 'trigger', at, session_id: context.session_id, user_id: identity.user_id, trace: event.trace } as const;
      enqueue.emit({ type: 'activity', draft: { ...draft, payload: triggerActivityPayload(signals, decision, clientId) } });
      const reply = event.reply;
      enqueue(() => reply(decision));
    }),
    // Raised rather than handled in the presence region: a region-level handler for a command
    // would shadow the root handler that does the command's work.
    touch: raise({ type: 'presence.touch' }),
    announceExpiry: emit(({ context }) => ({ type: 'session.expired' as const, sessionId: context.session_id })),
  },
}).createMachine({
  id: 'session',
  type: 'parallel',
  context: ({ input }) => ({ ...newSessionRecord(input.sessionId, input.at), settings: input.settings, trigger: newTriggerMemory() }),
  on: {
    'session.ingest': { actions: ['ingest', 'touch'] },
    'context.fetch': [
      { guard: 'voiceInactive', actions: [{ type: 'serveContext', params: { voiceActive: false } }, 'touch'] },
      { actions: [{ type: 'serveContext', params: { voiceActive: true } }, 'touch'] },
    ],
    // Suppressions that come from the state, in order of precedence; the action adds already_prompted.
    'trigger.evaluate': [
      { guard: 'assistantActive', actions: [{ type: 'evaluateTrigger', params: { holdBack: 'assistant_active' } }, 'touch'] },
      { guard: 'triggerCoolingDown', actions: [{ type: 'evaluateTrigger', params: { holdBack: 'cooldown' } }, 'touch'] },
      { actions: [{ type: 'evaluateTrigger', params: { holdBack: null } }, 'touch'] },
    ],
  },
  states: {
    voice: {
      initial: 'inactive',
      states: {
        inactive: {},
      },
    },
    trigger: {
      initial: 'ready',
      states: {
        ready: { on: { 'trigger.fired': 'cooldown' } },
        cooldown: { after: { triggerCooldown: 'ready' } },
      },
    },
    presence: {
      initial: 'live',
      // Not `reenter: true`: that makes the root the transition's domain, which exits and
      // re-enters every region (voice, trigger) on each command. Targeting the child restarts it anyway.
      on: { 'presence.touch': { target: '.live' } },
      states: {
        live: {
          after: {
            idleTtl: [{ guard: 'voiceInactive', target: 'expired' }, { target: 'live', reenter: true }],
          },
        },
        expired: { entry: 'announceExpiry' },
      },
    },
  },
});

export type SessionMachine = typeof sessionMachine;

/** Whether a session state value has voice running (starting and stopping count: media is in play). */
export function isVoiceActive(value: unknown): boolean {
  const voice = (value as { voice?: unknown } | null)?.voice;
  return voice !== undefined && voice !== 'inactive';
}
