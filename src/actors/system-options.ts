import type { AppConfig } from '../config.js';
import type { KnowledgeBase } from '../domain/kyc-knowledge.js';
import { resolveFeatureFlags } from '../domain/feature-flags.js';
import type { AppClock } from '../integrations/clock.js';
import type { MediaProvider } from '../integrations/media.js';
import type { Store } from '../store/ports.js';
import type { ActorSystemOptions } from './system.js';

/** What the actor system needs beyond its settings: the adapters and sources the caller made. */
export interface ActorSystemParts {
  clock: AppClock;
  logger: ActorSystemOptions['logger'];
  store: Store;
  media: MediaProvider;
  knowledgeBase: KnowledgeBase;
  inspect?: ActorSystemOptions['inspect'];
}

/** The actor system's options as the configuration sets them: one mapping for the service and whatever else builds a system. */
export function actorSystemOptions(config: AppConfig, parts: ActorSystemParts): ActorSystemOptions {
  return {
    clock: parts.clock,
    logger: parts.logger,
    featureFlags: resolveFeatureFlags(parts.media.ready, config.featureFlagOverrides),
    sessionIdleTtlSeconds: config.sessionIdleTtlSeconds,
    sessionHibernateSeconds: config.sessionHibernateSeconds,
    maxSessions: config.maxSessions,
    store: parts.store,
    sessionMaxBytes: config.sessionMaxBytes,
    memoryBudgetMb: config.memoryBudgetMb,
    media: parts.media,
    mediaRoomPrefix: config.mediaRoomPrefix,
    reengagementInactivitySeconds: config.reengagementInactivitySeconds,
    voiceSilenceTimeoutSeconds: config.voiceSilenceTimeoutSeconds,
    agentContext: { knowledgeBase: parts.knowledgeBase, refreshPolicy: config.voiceContextRefresh },
    criticalSteps: config.criticalSteps,
    inspect: parts.inspect,
  };
}
