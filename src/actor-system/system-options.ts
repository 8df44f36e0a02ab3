import type { AppConfig } from '../config.js';
import { criticalStepKeys } from '../domain/critical-steps.js';
import type { KnowledgeBase } from '../domain/kyc-knowledge.js';
import { resolveFeatureFlags } from '../domain/feature-flags.js';
import type { AppClock } from '../integrations/clock.js';
import type { MediaProvider } from '../integrations/media-port.js';
import type { WebhookSender } from '../integrations/webhook-sender.js';
import { httpWebhookSender } from '../integrations/webhook-sender.js';
import { openAiSummarizer } from '../integrations/summary-model.js';
import type { SessionSettings } from '../machines/session/session-context.js';
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
  /** How webhooks are sent; tests give one of their own. WEBHOOK_SECRET's signed POST by default. */
  sendWebhook?: WebhookSender;
}

/**
 * The settings every session is started with: the sessions section, the voice and media settings a
 * session reads, and whether the media server is ready. The one place they are made, for the
 * service, the cluster's session objects and whatever else runs a session.
 */
export function sessionSettings(
  config: Pick<AppConfig, 'sessions' | 'voice' | 'media'>,
  media: { ready: boolean },
): SessionSettings {
  const { sessions } = config;
  return {
    schemaRegistry:
      resolveFeatureFlags(media.ready, sessions.featureFlagOverrides)['integration.schema_registry'] !== false,
    criticalSteps: criticalStepKeys(sessions.criticalSteps),
    mediaReady: media.ready,
    mediaRoomPrefix: config.media.roomPrefix,
    reengagementInactivitySeconds: sessions.reengagementInactivitySeconds,
    idleTtlMs: sessions.idleTtlSeconds * 1000,
    sessionMaxBytes: sessions.maxBytes,
    voiceSilenceMs: config.voice.silenceTimeoutSeconds * 1000,
    agentJoinMs: config.voice.agentJoinSeconds * 1000,
    agentDispatchAttempts: config.voice.agentDispatchAttempts,
    roomCheckMs: config.voice.roomCheckSeconds * 1000,
  };
}

/** The actor system's options as the configuration sets them: one mapping for the service and whatever else builds a system. */
export function actorSystemOptions(config: AppConfig, parts: ActorSystemParts): ActorSystemOptions {
  const { sessions } = config;
  return {
    clock: parts.clock,
    logger: parts.logger,
    featureFlags: resolveFeatureFlags(parts.media.ready, sessions.featureFlagOverrides),
    settings: sessionSettings(config, parts.media),
    sessionHibernateSeconds: sessions.hibernateSeconds,
    maxSessions: sessions.maxSessions,
    store: parts.store,
    memoryBudgetMb: sessions.memoryBudgetMb,
    media: parts.media,
    agentContext: { knowledgeBase: parts.knowledgeBase, refreshPolicy: config.voice.contextRefresh },
    inspect: parts.inspect,
    calls: {
      send: parts.sendWebhook ?? httpWebhookSender(config.calls.webhookSecrets),
      retentionDays: config.calls.transcriptRetentionDays,
      summarize: config.calls.summaryModel && openAiSummarizer(config.calls.summaryModel),
      webhookUrls: config.calls.webhookUrls,
      resolveWindowMs: config.calls.resolveWindowMinutes * 60_000,
    },
  };
}
