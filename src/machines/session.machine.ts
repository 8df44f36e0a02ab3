import { emit, enqueueActions, raise, setup, stateIn } from 'xstate';
import { buildAgentContext } from '../domain/agent-context.js';
import type { SessionRecord } from '../domain/session-record.js';
import { applyEvent, eventActivityPayload, newSessionRecord } from '../domain/session-record.js';
import type { SessionCommand, SessionEmitted } from './session.events.js';

export interface SessionSettings {
  /** `integration.schema_registry`: when off, screen schemas are neither stored nor announced. */
  schemaRegistry: boolean;
}

export interface SessionInput {
  sessionId: string;
  at: number;
  settings: SessionSettings;
}

export interface SessionContext extends SessionRecord {
  settings: SessionSettings;
}

/** Internal: a command arrived, so the idle-eviction timer starts over. */
type PresenceTouch = { type: 'presence.touch' };

/**
 * One KYC user's session. Pure: time arrives on each command (`at`), timers are named
 * delays provided at bootstrap, and everything the world should know leaves as an emission.
 */
export const sessionMachine = setup({
  types: {
    context: {} as SessionContext,
    events: {} as SessionCommand | PresenceTouch,
    emitted: {} as SessionEmitted,
    input: {} as SessionInput,
  },
  delays: {
    // Replaced at bootstrap with SESSION_IDLE_TTL_SECONDS.
    idleTtl: 86_400_000,
  },
  guards: {
    voiceInactive: stateIn({ voice: 'inactive' }),
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
    // Raised rather than handled in the presence region: a region-level handler for a command
    // would shadow the root handler that does the command's work.
    touch: raise({ type: 'presence.touch' }),
    announceExpiry: emit(({ context }) => ({ type: 'session.expired' as const, sessionId: context.session_id })),
  },
}).createMachine({
  id: 'session',
  type: 'parallel',
  context: ({ input }) => ({ ...newSessionRecord(input.sessionId, input.at), settings: input.settings }),
  on: {
    'session.ingest': { actions: ['ingest', 'touch'] },
    'context.fetch': [
      { guard: 'voiceInactive', actions: [{ type: 'serveContext', params: { voiceActive: false } }, 'touch'] },
      { actions: [{ type: 'serveContext', params: { voiceActive: true } }, 'touch'] },
    ],
  },
  states: {
    voice: {
      initial: 'inactive',
      states: {
        inactive: {},
      },
    },
    presence: {
      initial: 'live',
      on: { 'presence.touch': { target: '.live', reenter: true } },
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
