/** Where sessions run: in this process, or as Restate virtual objects shared by every process (cluster mode). */
import { z } from 'zod';
import { invalidConfiguration } from './config-error.js';
import { RESTATE_PUBLIC_KEY, restateUrl } from './env-values.js';

export const clusterEnv = z.object({
  SESSION_HOST: z.enum(['embedded', 'restate'], { error: 'must be embedded or restate' }).default('embedded'),
  RESTATE_INGRESS_URL: restateUrl,
  RESTATE_ADMIN_URL: restateUrl,
  RESTATE_ENDPOINT_PORT: z.coerce.number().int().min(1).max(65_535).optional(),
  // The endpoint the Restate server calls: loopback unless the server runs on another host of a private network.
  RESTATE_ENDPOINT_HOST: z.string().trim().min(1).default('127.0.0.1'),
  // The Restate servers' request-signing public keys (docs/cluster.md, Request signing): the endpoint refuses any call not signed by one.
  RESTATE_IDENTITY_KEYS: z
    .string()
    .optional()
    .transform((value) => (value ?? '').split(',').map((key) => key.trim()).filter((key) => key.length > 0))
    .refine((keys) => keys.every((key) => RESTATE_PUBLIC_KEY.test(key)), { error: 'each key must be a Restate public key, publickeyv1_ and base58 (Restate logs its own at start)' }),
});

export type SessionHostConfig =
  | { kind: 'embedded' }
  /** `redisUrl`: ACTIVITY_LOG's Redis, which also carries the commands sessions push to control sockets on every process. */
  | { kind: 'restate'; ingressUrl: string; adminUrl: string; endpointHost: string; endpointPort: number; redisUrl: string; identityKeys: string[] };

export interface ClusterSection {
  /** SESSION_HOST: this process's supervisor, or Restate virtual objects reached through its ingress. */
  sessionHost: SessionHostConfig;
}

/**
 * SESSION_HOST=restate needs the Restate addresses, its endpoint's port, an activity log every
 * process shares (the store section's ACTIVITY_LOG), and one digest secret (the privacy section's).
 */
export function clusterSection(e: z.infer<typeof clusterEnv>, shared: { activityLog: string | undefined; idDigestSecret: string | undefined }): ClusterSection {
  if (e.SESSION_HOST === 'embedded') return { sessionHost: { kind: 'embedded' } };
  const missing = (
    [
      ['RESTATE_INGRESS_URL', e.RESTATE_INGRESS_URL],
      ['RESTATE_ADMIN_URL', e.RESTATE_ADMIN_URL],
      ['RESTATE_ENDPOINT_PORT', e.RESTATE_ENDPOINT_PORT],
      ['ACTIVITY_LOG', shared.activityLog],
      // Every process must key an identity-looking session id alike, and none keeps a store of its own.
      ['ID_DIGEST_SECRET', shared.idDigestSecret],
      // Every handler is callable through the endpoint: only calls Restate signed are taken.
      ['RESTATE_IDENTITY_KEYS', e.RESTATE_IDENTITY_KEYS.length > 0 ? e.RESTATE_IDENTITY_KEYS : undefined],
    ] as const
  ).find(([, value]) => value === undefined);
  if (missing) throw invalidConfiguration(`${missing[0]}: required when SESSION_HOST=restate`);
  return {
    sessionHost: {
      kind: 'restate',
      ingressUrl: e.RESTATE_INGRESS_URL!,
      adminUrl: e.RESTATE_ADMIN_URL!,
      endpointHost: e.RESTATE_ENDPOINT_HOST,
      endpointPort: e.RESTATE_ENDPOINT_PORT!,
      redisUrl: shared.activityLog!,
      identityKeys: e.RESTATE_IDENTITY_KEYS,
    },
  };
}
