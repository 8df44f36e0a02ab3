import type { RedisOptions } from 'ioredis';
import { Redis } from 'ioredis';
import { redisAddress, type RedisAddress } from '../config/redis-address.js';

/**
 * A connection to the address with a module's own options. Through the sentinels it is always to
 * the primary: ioredis asks them where it is on every (re)connection, checks its role once connected,
 * and `failoverDetector` drops the connection as soon as they announce a new primary.
 */
export function connectRedis(address: string | RedisAddress, options: RedisOptions): Redis {
  const parsed = typeof address === 'string' ? redisAddress(address) : address;
  if (parsed.kind === 'url') return new Redis(parsed.url, options);
  return new Redis({ ...parsed.options, role: 'master', failoverDetector: true, ...options });
}
