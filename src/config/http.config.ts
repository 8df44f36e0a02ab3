/**
 * The HTTP server: where it listens, who may call it, and how much any caller may take of it
 * (connections, requests, replays, time).
 */
import { z } from 'zod';
import { isLoopbackHost } from '../domain/loopback.js';
import { booleanText, credential, csv, nonNegativeInt, optionalText, positiveInt } from './env-values.js';

export const httpEnv = z.object({
  PORT: z.coerce.number().int().min(0).max(65_535).default(8080),
  // Loopback unless told otherwise (docs/decisions/0002-safe-defaults-for-running-it.md): nothing is exposed by accident.
  HOST: z.string().min(1).default('127.0.0.1'),
  API_KEY: credential(csv.optional()),
  RATE_LIMIT_PER_MINUTE: nonNegativeInt(1200),
  // Unset: loopback clients are limited only when the service is reachable from elsewhere (docs/reference/limits.md).
  RATE_LIMIT_LOOPBACK: booleanText.optional(),
  // `true` would trust any X-Forwarded-For, and a client rotating it escapes the rate limit.
  TRUST_PROXY: optionalText.refine((raw) => raw?.toLowerCase() !== 'true', {
    error:
      'true trusts any X-Forwarded-For (clients could evade the rate limit); give the number of proxy hops (e.g. 1) or the proxy addresses/subnets',
  }),
  SHUTDOWN_GRACE_SECONDS: positiveInt(10).pipe(z.number().max(60)),
  MAX_CONNECTIONS: positiveInt(10_000),
  // Above an honest burst from one address (1,000 operator streams opened at once, many apps behind
  // one NAT), below MAX_CONNECTIONS so one address still cannot take every place (docs/explanation/security.md).
  MAX_UNAUTHENTICATED_PER_CLIENT: positiveInt(2048),
  // A request sent again with the same X-Request-ID or Idempotency-Key within this is answered as the first, after a restart too; 0 turns it off.
  REPLAY_WINDOW_SECONDS: nonNegativeInt(86_400).pipe(z.number().max(86_400)),
  REQUEST_TIMEOUT_SECONDS: positiveInt(10).pipe(z.number().max(300)),
  // Listening sockets on the port: Node takes one connection per socket per turn of its event loop (docs/reference/limits.md, "one accept per turn").
  HTTP_ACCEPTORS: positiveInt(64).pipe(z.number().max(1024)),
  // Names besides loopback and IP addresses that requests may carry as Host (docs/explanation/security.md, DNS rebinding).
  ALLOWED_HOSTS: csv.optional(),
});

export interface HttpSection {
  port: number;
  host: string;
  /** API_KEY: the keys accepted (several while rotating); none = no key check. */
  apiKeys: string[];
  rateLimitPerMinute: number;
  /**
   * Whether clients on this machine count against the rate limit. Off by default for a service
   * bound to loopback with no proxy in front: its only clients are the developer's own simulator
   * and console, which would otherwise lock each other out.
   */
  rateLimitLoopback: boolean;
  trustProxy: string | undefined;
  /** How long a shutdown waits for requests under way before it closes their connections. */
  shutdownGraceSeconds: number;
  /** Concurrent connections the server accepts, of every kind; SSE and WebSocket also have caps of their own. */
  maxConnections: number;
  /** Connections one client address may hold before any of them shows a key; past it its oldest gives way (docs/explanation/security.md). */
  maxUnauthenticatedPerClient: number;
  /** REPLAY_WINDOW_SECONDS: how long a request id is remembered, per client (docs/reference/limits.md); 0 = not at all. */
  replayWindowSeconds: number;
  /** A request's headers and body must arrive within this (slow clients are cut). */
  requestTimeoutSeconds: number;
  /** HTTP_ACCEPTORS: sockets listening on the port together, each taking a connection a turn (src/http/acceptors.ts); 1 = one plain listener. */
  acceptors: number;
  /**
   * ALLOWED_HOSTS: host names served besides loopback names and IP addresses; undefined when unset.
   * Checked when set, and always with no API_KEY (served-host.ts).
   */
  allowedHosts: string[] | undefined;
}

export function httpSection(e: z.infer<typeof httpEnv>): HttpSection {
  return {
    port: e.PORT,
    host: e.HOST,
    apiKeys: e.API_KEY ?? [],
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    rateLimitLoopback: e.RATE_LIMIT_LOOPBACK ?? (!isLoopbackHost(e.HOST) || e.TRUST_PROXY !== undefined),
    trustProxy: e.TRUST_PROXY,
    shutdownGraceSeconds: e.SHUTDOWN_GRACE_SECONDS,
    maxConnections: e.MAX_CONNECTIONS,
    maxUnauthenticatedPerClient: e.MAX_UNAUTHENTICATED_PER_CLIENT,
    replayWindowSeconds: e.REPLAY_WINDOW_SECONDS,
    requestTimeoutSeconds: e.REQUEST_TIMEOUT_SECONDS,
    acceptors: e.HTTP_ACCEPTORS,
    allowedHosts: e.ALLOWED_HOSTS,
  };
}
