/**
 * The service's actor system in this process, as `src/server.ts` builds it but on a simulated
 * clock, loaded from the built service (`npm run bench` builds it first) so a worker runs on plain
 * node (type stripping) without a loader: under callgrind a loader costs minutes.
 */
import type { ActorSystem } from '../../src/actors/system.js';

const built = (path: string) => new URL(`../../dist/src/${path}`, import.meta.url).href;

export async function inProcessSystem(store: 'memory' | 'sqlite' = 'memory', dataDir?: string): Promise<ActorSystem> {
  const { SimulatedClock } = await import('xstate');
  const { createActorSystem } = (await import(built('actors/system.js'))) as typeof import('../../src/actors/system.js');
  const { loadConfig } = (await import(built('config.js'))) as typeof import('../../src/config.js');
  const { resolveFeatureFlags } = (await import(built('domain/feature-flags.js'))) as typeof import('../../src/domain/feature-flags.js');
  const { createMediaProvider } = (await import(built('integrations/media.js'))) as typeof import('../../src/integrations/media.js');
  const { loadKnowledgeBase } = (await import(built('integrations/knowledge-base.js'))) as typeof import('../../src/integrations/knowledge-base.js');
  const { createLogger } = (await import(built('logger.js'))) as typeof import('../../src/logger.js');
  const { openStore } = (await import(built('store/open-store.js'))) as typeof import('../../src/store/open-store.js');
  const config = loadConfig({ LOG_LEVEL: 'warn', STORE: store, ...(dataDir ? { DATA_DIR: dataDir } : {}), MAX_SESSIONS: '1000000', MEMORY_BUDGET_MB: '16384' });
  const clock = new SimulatedClock();
  const media = createMediaProvider(config);
  return createActorSystem({
    clock,
    logger: createLogger('warn'),
    featureFlags: resolveFeatureFlags(media.ready, {}),
    sessionIdleTtlSeconds: config.sessionIdleTtlSeconds,
    sessionHibernateSeconds: 0,
    maxSessions: config.maxSessions,
    store: openStore(config, clock),
    sessionMaxBytes: config.sessionMaxBytes,
    memoryBudgetMb: config.memoryBudgetMb,
    media,
    mediaRoomPrefix: config.mediaRoomPrefix,
    reengagementInactivitySeconds: config.reengagementInactivitySeconds,
    agentContext: { knowledgeBase: loadKnowledgeBase(undefined), refreshPolicy: config.voiceContextRefresh },
    criticalSteps: config.criticalSteps,
  });
}
