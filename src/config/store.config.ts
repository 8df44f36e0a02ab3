/** Where sessions and activity are kept, how safely, and for how long. */
import { z } from 'zod';
import { redisAddressProblem } from './redis-address.js';
import { nonNegativeInt } from './env-values.js';

export const storeEnv = z.object({
  // SQLite under DATA_DIR (kept across restarts) or memory.
  STORE: z.enum(['sqlite', 'memory'], { error: 'must be sqlite or memory' }).default('sqlite'),
  DATA_DIR: z.string().trim().min(1).default('./data'),
  STORE_SYNC: z.enum(['normal', 'full'], { error: 'must be normal or full' }).default('normal'),
  ACTIVITY_RETENTION_ITEMS: z.coerce.number().int().positive().max(100_000_000).optional(),
  // Older name of the count limit (the in-memory ring's size), still honoured.
  ACTIVITY_BUFFER_SIZE: z.coerce.number().int().positive().max(1_000_000).optional(),
  ACTIVITY_RETENTION_DAYS: nonNegativeInt(30).pipe(z.number().max(36_500)),
  // Unset: activity is kept by STORE. A redis:// URL or a redis+sentinel:// address (src/config/redis-address.ts): one Redis
  // Stream shared by every service process.
  ACTIVITY_LOG: z
    .string()
    .trim()
    .superRefine((value, context) => {
      const problem = redisAddressProblem(value);
      if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
    })
    .optional(),
});

export interface StoreSection {
  kind: 'sqlite' | 'memory';
  /** The directory of the database file (sqlite). */
  dataDir: string;
  /** `full`: every commit survives power loss, at several times the cost per commit. */
  sync: 'normal' | 'full';
  /** Activity items kept, newest first (ACTIVITY_RETENTION_ITEMS). */
  activityRetentionItems: number;
  /** Activity items older than this many days are dropped (SQLite store); 0 keeps them whatever their age. */
  activityRetentionDays: number;
  /** ACTIVITY_LOG: a Redis URL or Sentinel address when the activity log is a Redis Stream; undefined keeps it in STORE. */
  activityLog: string | undefined;
}

/** A SQLite log is an audit trail and costs disk, not memory; the memory ring costs memory. */
const DEFAULT_RETENTION_ITEMS = { sqlite: 1_000_000, memory: 10_000 } as const;

export function storeSection(e: z.infer<typeof storeEnv>): StoreSection {
  return {
    kind: e.STORE,
    dataDir: e.DATA_DIR,
    sync: e.STORE_SYNC,
    activityRetentionItems: e.ACTIVITY_RETENTION_ITEMS ?? e.ACTIVITY_BUFFER_SIZE ?? DEFAULT_RETENTION_ITEMS[e.STORE],
    activityRetentionDays: e.ACTIVITY_RETENTION_DAYS,
    activityLog: e.ACTIVITY_LOG,
  };
}
