/** Where sessions run: in this process, or as Restate virtual objects shared by every process (cluster mode). */
import { z } from 'zod';
import { invalidConfiguration } from './config-error.js';
import { RESTATE_PUBLIC_KEY, restateUrl } from './env-values.js';

export const clusterEnv = z.object({
  SESSION_HOST: z.enum(['embedded', 'restate'], { error: 'must be embedded or restate' }).default('embedded'),
  // both: an HTTP front and a Restate endpoint; front: the HTTP API only, sessions run in the processes that serve the endpoint
  // (docs/explanation/cluster.md, "Fronts").
  CLUSTER_ROLE: z.enum(['both', 'front'], { error: 'must be both or front' }).default('both'),
  RESTATE_INGRESS_URL: restateUrl,
  RESTATE_ADMIN_URL: restateUrl,
  RESTATE_ENDPOINT_PORT: z.coerce.number().int().min(1).max(65_535).optional(),
  // The endpoint the Restate server calls: loopback unless the server runs on another host of a private network.
  RESTATE_ENDPOINT_HOST: z.string().trim().min(1).default('127.0.0.1'),
  // How long Restate keeps a completed event's or call's journal to inspect (sys_journal); none by default
  // (docs/explanation/cluster.md, "Journal work per invocation").
  RESTATE_JOURNAL_RETENTION_SECONDS: z.coerce
    .number({ error: 'must be a number of seconds' })
    .int()
    .min(0)
    .max(86_400)
    .default(0),
  // The Restate servers' request-signing public keys (docs/how-to/production.md, Request signing): the endpoint refuses any call not signed by one.
  RESTATE_IDENTITY_KEYS: z
    .string()
    .optional()
    .transform((value) =>
      (value ?? '')
        .split(',')
        .map((key) => key.trim())
        .filter((key) => key.length > 0),
    )
    .refine((keys) => keys.every((key) => RESTATE_PUBLIC_KEY.test(key)), {
      error: 'each key must be a Restate public key, publickeyv1_ and base58 (Restate logs its own at start)',
    }),
});

/** The session objects' endpoint a process serves to the Restate server. */
export interface SessionEndpointConfig {
  host: string;
  port: number;
  /** The Restate servers' request-signing public keys: only calls signed by one are taken. */
  identityKeys: string[];
  /** RESTATE_JOURNAL_RETENTION_SECONDS, in ms: how long a completed event's or call's journal is kept (0: not kept). */
  journalRetentionMs: number;
}

export type SessionHostConfig =
  | { kind: 'embedded' }
  /**
   * `redisUrl`: ACTIVITY_LOG's Redis, which also carries the commands sessions push to control
   * sockets on every process. `endpoint`: null on a front (CLUSTER_ROLE=front), which serves none.
   */
  | { kind: 'restate'; ingressUrl: string; adminUrl: string; redisUrl: string; endpoint: SessionEndpointConfig | null };

export interface ClusterSection {
  /** SESSION_HOST: this process's supervisor, or Restate virtual objects reached through its ingress. */
  sessionHost: SessionHostConfig;
}

/**
 * SESSION_HOST=restate needs the Restate addresses, an activity log every process shares (the
 * store section's ACTIVITY_LOG), one digest secret (the privacy section's) and, unless the process
 * is a front only, its endpoint's port and the keys whose signatures it takes.
 */
export function clusterSection(
  e: z.infer<typeof clusterEnv>,
  shared: { activityLog: string | undefined; idDigestSecret: string | undefined },
): ClusterSection {
  if (e.SESSION_HOST === 'embedded') return { sessionHost: { kind: 'embedded' } };
  const servesEndpoint = e.CLUSTER_ROLE === 'both';
  const missing = (
    [
      ['RESTATE_INGRESS_URL', e.RESTATE_INGRESS_URL],
      ['RESTATE_ADMIN_URL', e.RESTATE_ADMIN_URL],
      ...(servesEndpoint ? ([['RESTATE_ENDPOINT_PORT', e.RESTATE_ENDPOINT_PORT]] as const) : []),
      ['ACTIVITY_LOG', shared.activityLog],
      // Every process must key an identity-looking session id alike, and none keeps a store of its own.
      ['ID_DIGEST_SECRET', shared.idDigestSecret],
      // Every handler is callable through the endpoint: only calls Restate signed are taken.
      ...(servesEndpoint
        ? ([
            ['RESTATE_IDENTITY_KEYS', e.RESTATE_IDENTITY_KEYS.length > 0 ? e.RESTATE_IDENTITY_KEYS : undefined],
          ] as const)
        : []),
    ] as const
  ).find(([, value]) => value === undefined);
  if (missing)
    throw invalidConfiguration(
      `${missing[0]}: required when SESSION_HOST=restate${servesEndpoint ? '' : ' and CLUSTER_ROLE=front'}`,
    );
  // A port set for a front would be a process its operator expects Restate to reach, and it never listens.
  if (!servesEndpoint && e.RESTATE_ENDPOINT_PORT !== undefined)
    throw invalidConfiguration(
      'RESTATE_ENDPOINT_PORT: a front (CLUSTER_ROLE=front) serves no Restate endpoint; unset it, or run the process as CLUSTER_ROLE=both',
    );
  return {
    sessionHost: {
      kind: 'restate',
      ingressUrl: e.RESTATE_INGRESS_URL!,
      adminUrl: e.RESTATE_ADMIN_URL!,
      redisUrl: shared.activityLog!,
      endpoint: servesEndpoint
        ? {
            host: e.RESTATE_ENDPOINT_HOST,
            port: e.RESTATE_ENDPOINT_PORT!,
            identityKeys: e.RESTATE_IDENTITY_KEYS,
            journalRetentionMs: e.RESTATE_JOURNAL_RETENTION_SECONDS * 1000,
          }
        : null,
    },
  };
}
