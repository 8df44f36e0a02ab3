import type { Logger } from 'pino';
import type { InspectionEvent, Observer } from 'xstate';
import type { AgentContextSources } from '../domain/agent-context.js';
import type { FeatureFlags } from '../domain/feature-flags.js';
import type { AppClock } from '../integrations/clock.js';
import type { SessionMachine } from '../machines/session.machine.js';
import { sessionMachine } from '../machines/session.machine.js';
import type { ActivityStore } from './activity-store.js';
import { createActivityStore } from './activity-store.js';
import { SessionSupervisor } from './supervisor.js';

export interface ActorSystemOptions {
  clock: AppClock;
  logger: Logger;
  featureFlags: FeatureFlags;
  sessionIdleTtlSeconds: number;
  maxSessions: number;
  activityBufferSize: number;
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void) | undefined;
  /** The session machine to run; tests substitute a variant to prove failure isolation. */
  sessionLogic?: SessionMachine;
  /** Knowledge base and refresh policy for voice-agent context, loaded once at start-up. */
  agentContext: AgentContextSources;
}

export interface ActorSystem {
  clock: AppClock;
  activity: ActivityStore;
  supervisor: SessionSupervisor;
  featureFlags: FeatureFlags;
  agentContext: AgentContextSources;
  stop(): void;
}

const ASK_TIMEOUT_MS = 15_000;

/** Bootstrap: one clock, one activity actor, one supervisor; the session machine gets its timers from config. */
export function createActorSystem(options: ActorSystemOptions): ActorSystem {
  const activity = createActivityStore(options.activityBufferSize);
  const sessionLogic = (options.sessionLogic ?? sessionMachine).provide({
    delays: { idleTtl: options.sessionIdleTtlSeconds * 1000 },
  });
  const supervisor = new SessionSupervisor({
    clock: options.clock,
    logger: options.logger,
    activity,
    sessionLogic,
    settings: { schemaRegistry: options.featureFlags['integration.schema_registry'] !== false },
    maxSessions: options.maxSessions,
    askTimeoutMs: ASK_TIMEOUT_MS,
    inspect: options.inspect,
  });
  return {
    clock: options.clock,
    activity,
    supervisor,
    featureFlags: options.featureFlags,
    agentContext: options.agentContext,
    stop: () => supervisor.stopAll(),
  };
}
