import type { RedisOptions } from 'ioredis';

/**
 * ACTIVITY_LOG's Redis: one server's URL (`redis://`, `rediss://`), or Redis Sentinel
 * (`redis+sentinel://[[user]:password@]host1:26379,host2:26379/mymaster`, `rediss+sentinel://` for
 * TLS), where the sentinels name the primary and a client follows it when a replica is promoted
 * (docs/how-to/production.md, Redis). Read here, where the setting is checked; every connection to that Redis is
 * made by src/store/redis-connection.ts.
 */
export type RedisAddress = { kind: 'url'; url: string } | { kind: 'sentinel'; options: RedisOptions };

const SENTINEL_PORT = 26_379;
const URL_FORM = /^rediss?:\/\/\S+$/;
/** scheme, optional userinfo, the sentinels (comma-separated), the primary's name. */
const SENTINEL_FORM = /^(rediss?)\+sentinel:\/\/(?:([^@/]*)@)?([^/@]+)\/([^/?#]+)\/?$/;
/** `host`, `host:port`, `[v6]` or `[v6]:port`. */
const SENTINEL_HOST = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9_.-]+))(?::(\d{1,5}))?$/;

/** What ACTIVITY_LOG must look like, said whenever it does not. */
export const REDIS_ADDRESS_FORMS =
  'must be a redis:// or rediss:// URL, or redis+sentinel://host:port,host:port/name (rediss+sentinel:// for TLS)';

export class RedisAddressError extends Error {}

export function redisAddress(value: string): RedisAddress {
  if (URL_FORM.test(value)) return { kind: 'url', url: value };
  const sentinel = SENTINEL_FORM.exec(value);
  if (!sentinel) throw new RedisAddressError(REDIS_ADDRESS_FORMS);
  const [, scheme, userinfo, hosts, name] = sentinel as unknown as [string, string, string | undefined, string, string];
  const sentinels = hosts.split(',').map((host) => {
    const parts = SENTINEL_HOST.exec(host.trim());
    const port = Number(parts?.[3] ?? SENTINEL_PORT);
    if (!parts || port < 1 || port > 65_535)
      throw new RedisAddressError(`sentinel "${host}" is not host or host:port (${REDIS_ADDRESS_FORMS})`);
    return { host: parts[1] ?? parts[2]!, port };
  });
  const options: RedisOptions = { sentinels, name: decoded(name), ...credentials(userinfo) };
  // TLS to the sentinels and to the servers they name alike.
  if (scheme === 'rediss') Object.assign(options, { tls: {}, sentinelTLS: {}, enableTLSForSentinelMode: true });
  return { kind: 'sentinel', options };
}

/** The servers' user and password; the sentinels are asked without (a sentinel with `requirepass` is not supported). */
function credentials(userinfo: string | undefined): Pick<RedisOptions, 'username' | 'password'> {
  if (userinfo === undefined) return {};
  const colon = userinfo.indexOf(':');
  const username = decoded(colon < 0 ? userinfo : userinfo.slice(0, colon));
  const password = colon < 0 ? '' : decoded(userinfo.slice(colon + 1));
  return { ...(username ? { username } : {}), ...(password ? { password } : {}) };
}

function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new RedisAddressError(`"${part}" is not percent-encoded correctly (${REDIS_ADDRESS_FORMS})`);
  }
}

/** Why ACTIVITY_LOG is not an address, or undefined when it is one. */
export function redisAddressProblem(value: string): string | undefined {
  try {
    redisAddress(value);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
