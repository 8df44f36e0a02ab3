import type { Logger } from 'pino';
import type { AppConfig } from '../config.js';
import type { AppClock } from '../integrations/clock.js';
import { openMemoryStore } from './memory-store.js';
import type { Store } from './ports.js';
import { RedisActivityLog } from './redis-activity-log.js';
import { openSqliteStore } from './sqlite-store.js';

export { StoreOpenError } from './sqlite-store.js';

/** The store STORE names; a SQLite file that cannot be used throws StoreOpenError. `logger` hears of damaged rows. */
export function openStore(
  config: Pick<AppConfig, 'store' | 'activityRetentionItems' | 'activityRetentionDays'> & Partial<Pick<AppConfig, 'activityLog'>>,
  clock: AppClock,
  logger?: Logger,
): Store {
  const store = openLocalStore(config, clock, logger);
  if (config.activityLog === undefined) return store;
  // Sessions stay in STORE; activity goes to the shared stream (STORE's own log stays empty).
  return { sessions: store.sessions, activity: new RedisActivityLog({ url: config.activityLog, capacity: config.activityRetentionItems }) };
}

function openLocalStore(config: Pick<AppConfig, 'store' | 'activityRetentionItems' | 'activityRetentionDays'>, clock: AppClock, logger: Logger | undefined): Store {
  if (config.store.kind === 'memory') return openMemoryStore(config.activityRetentionItems, clock.now());
  return openSqliteStore({
    dataDir: config.store.dataDir,
    sync: config.store.sync,
    retentionItems: config.activityRetentionItems,
    retentionDays: config.activityRetentionDays,
    now: () => clock.now(),
    ...(logger ? { onUnreadableItem: (id: number) => logger.error({ activity_id: id }, 'activity item unreadable; left out of reads') } : {}),
  });
}
