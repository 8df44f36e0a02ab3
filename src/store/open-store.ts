import type { Logger } from 'pino';
import type { StoreSection } from '../config/store.config.js';
import type { AppClock } from '../integrations/clock.js';
import type { CallBookOptions } from './call-book.js';
import { openMemoryStore } from './memory-store.js';
import type { Store } from './ports.js';
import { RedisActivityLog } from './redis-activity-log.js';
import { openSqliteStore } from './sqlite-store.js';

export { StoreOpenError } from './sqlite-opening.js';

/**
 * The store STORE names; a SQLite file that cannot be used throws StoreOpenError. `logger` hears of
 * damaged rows. `clustered`: sessions live in Restate, and only requests commit here (RedisActivityLog's `refusalsLeaveNothing`).
 * `replyKeepMs`: how long SQLite keeps named requests' replies (REPLAY_WINDOW_SECONDS); `calls`: where webhooks go.
 */
export function openStore(
  config: StoreSection,
  clock: AppClock,
  logger?: Logger,
  clustered = false,
  replyKeepMs = 0,
  calls: CallBookOptions = { webhookUrls: [] },
): Store {
  // The id in the message, not a field: every field is scanned for identity values, and a stream's
  // 16-digit ids read as card numbers there. The id is the log's own, never a client's.
  const onUnreadableItem =
    logger && ((id: number) => logger.error(`activity item ${id} unreadable; left out of reads`));
  const store = openLocalStore(config, clock, onUnreadableItem, replyKeepMs, calls);
  if (config.activityLog === undefined) return store;
  // Sessions stay in STORE; activity goes to the shared stream (STORE's own log stays empty).
  return {
    sessions: store.sessions,
    activity: new RedisActivityLog({
      url: config.activityLog,
      capacity: config.activityRetentionItems,
      refusalsLeaveNothing: clustered,
      ...(onUnreadableItem ? { onUnreadableItem } : {}),
    }),
  };
}

function openLocalStore(
  config: StoreSection,
  clock: AppClock,
  onUnreadableItem: ((id: number) => void) | undefined,
  replyKeepMs: number,
  calls: CallBookOptions,
): Store {
  if (config.kind === 'memory') return openMemoryStore(config.activityRetentionItems, clock.now(), calls);
  return openSqliteStore({
    dataDir: config.dataDir,
    sync: config.sync,
    retentionItems: config.activityRetentionItems,
    retentionDays: config.activityRetentionDays,
    now: () => clock.now(),
    replyKeepMs,
    calls,
    ...(onUnreadableItem ? { onUnreadableItem } : {}),
  });
}
