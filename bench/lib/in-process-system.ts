/**
 * The service's actor system in this process, as `src/server.ts` builds it but on a simulated
 * clock, loaded from the built service (`npm run bench` builds it first) so a worker runs on plain
 * node (type stripping) without a loader: under callgrind a loader costs minutes.
 */
import type { SimulatedClock } from 'xstate';
import type { ActorSystem } from '../../src/actor-system/system.js';

const built = (path: string) => new URL(`../../dist/src/${path}`, import.meta.url).href;

export interface InProcessOptions {
  /** SESSION_HIBERNATE_SECONDS; 0 (never) unless given. */
  hibernateSeconds?: number;
  /** Handed the simulated clock the system runs on, for a caller that moves time on. */
  onClock?: (clock: SimulatedClock) => void;
}

export async function inProcessSystem(
  store: 'memory' | 'sqlite' = 'memory',
  dataDir?: string,
  options: InProcessOptions = {},
): Promise<ActorSystem> {
  const { SimulatedClock } = await import('xstate');
  const { createActorSystem } = (await import(
    built('actor-system/system.js')
  )) as typeof import('../../src/actor-system/system.js');
  const { actorSystemOptions } = (await import(
    built('actor-system/system-options.js')
  )) as typeof import('../../src/actor-system/system-options.js');
  const { loadConfig } = (await import(built('config.js'))) as typeof import('../../src/config.js');
  const { createMediaProvider } = (await import(
    built('integrations/open-media.js')
  )) as typeof import('../../src/integrations/open-media.js');
  const { loadKnowledgeBase } = (await import(
    built('integrations/knowledge-base.js')
  )) as typeof import('../../src/integrations/knowledge-base.js');
  const { createLogger } = (await import(built('logger.js'))) as typeof import('../../src/logger.js');
  const { openStore } = (await import(built('store/open-store.js'))) as typeof import('../../src/store/open-store.js');
  const config = loadConfig({
    LOG_LEVEL: 'warn',
    STORE: store,
    ...(dataDir ? { DATA_DIR: dataDir } : {}),
    MAX_SESSIONS: '1000000',
    MEMORY_BUDGET_MB: '16384',
    SESSION_HIBERNATE_SECONDS: String(options.hibernateSeconds ?? 0),
  });
  const clock = new SimulatedClock();
  options.onClock?.(clock);
  const media = createMediaProvider(config.media);
  return createActorSystem(
    actorSystemOptions(config, {
      clock,
      logger: createLogger('warn'),
      store: openStore(config.store, clock),
      media,
      knowledgeBase: loadKnowledgeBase(undefined),
    }),
  );
}
