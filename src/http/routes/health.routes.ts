import type { Request, RequestHandler } from 'express';
import type { StoreHealth } from '../../store/ports.js';
import type { ClusterHealth } from '../../actor-system/cluster-health.js';
import { clusterHealthy } from '../../actor-system/cluster-health.js';
import type { RouteDoc } from '../route-doc.js';
import { Health } from '../schemas/common.schema.js';
import type { HealthSources, RouteModule } from '../route-module.js';
import { Router } from 'express';

export const healthRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    operationId: 'getHealth',
    path: '/health',
    tag: 'operations',
    summary: 'Health: store, memory budget and open connections',
    description:
      'Liveness, the store, the memory budget in use and open connections by kind; exempt from ' +
      "the API key and the rate limit. The SQLite store's file is named only to a request " +
      "carrying one of API_KEY's keys.",
    authenticated: false,
    rateLimited: false,
    shutdownGated: false,
    responses: {
      200: { description: 'serving', schema: Health },
      503: {
        description:
          'shutting down, the store refuses writes (disk full): `store.status` is `failing`, or in ' +
          'cluster mode (SESSION_HOST=restate) Restate or Redis is unreachable: `cluster` says which',
        schema: Health,
      },
    },
  },
  {
    method: 'get',
    operationId: 'getLiveness',
    path: '/health/live',
    tag: 'operations',
    summary: 'Liveness probe',
    description:
      'Liveness probe: 200 whenever the process answers at all, draining or not, whatever its ' +
      'dependencies do. A probe that times out is the only failure: restart the process then, ' +
      'never on a 503 from /health or /health/ready (docs/how-to/production.md, Probes).',
    authenticated: false,
    rateLimited: false,
    shutdownGated: false,
    responses: { 200: { description: 'the process runs and answers', schema: Health } },
  },
  {
    method: 'get',
    operationId: 'getReadiness',
    path: '/health/ready',
    tag: 'operations',
    summary: 'Readiness probe for a load balancer',
    description:
      'Readiness probe for a load balancer: whether to send this process traffic. 503 while it is ' +
      'draining, its own store refuses writes, or in cluster mode Redis does not answer ' +
      '(`redis_unreachable`): Restate would take events one-way that could not be applied until ' +
      'Redis is back. Restate down is reported in `cluster` but leaves every process ready: each ' +
      'request then gets a 503 naming it (docs/how-to/production.md, Probes).',
    authenticated: false,
    rateLimited: false,
    shutdownGated: false,
    responses: {
      200: { description: 'ready for traffic', schema: Health },
      503: {
        description:
          'draining (`shutting_down`), its own store refuses writes (`store_failing`), or in cluster mode Redis does not answer (`redis_unreachable`)',
        schema: Health,
      },
    },
  },
];

/** The store as a probe may see it: its kind and state, and its file only to a caller with a key. */
function shownStore(store: StoreHealth, keyGiven: boolean): StoreHealth {
  if (keyGiven) return store;
  const { file: _file, ...rest } = store;
  return rest;
}

/**
 * Why a load balancer should send this process nothing: draining, or the store it alone writes
 * refusing; in cluster mode, Redis not answering. A frozen Redis keeps its connections open, so
 * events are still taken one-way by Restate and acknowledged, then applied only once Redis is back
 * (seconds later, or never seen by a client told 200): out of rotation instead, and back as soon
 * as Redis answers the probe's PING (docs/how-to/production.md, Probes).
 */
function notReady(
  sources: HealthSources,
  store: StoreHealth,
  cluster: ClusterHealth | undefined,
): 'shutting_down' | 'store_failing' | 'redis_unreachable' | undefined {
  if (sources.isShuttingDown()) return 'shutting_down';
  if (store.status !== 'ok' && !sources.cluster) return 'store_failing';
  if (cluster && !cluster.redis_answers) return 'redis_unreachable';
  return undefined;
}

async function healthBody(sources: HealthSources, req: Request) {
  const store = sources.store();
  const cluster = await sources.cluster?.();
  return {
    store,
    body: {
      store: shownStore(store, sources.keyGiven(req)),
      memory: sources.memory(),
      connections: sources.connections(),
      ...(cluster ? { cluster } : {}),
    },
    cluster,
  };
}

/** `/health`: everything at once, for dashboards and alerts; 503 when anything the process needs fails. */
export function healthHandler(sources: HealthSources): RequestHandler {
  return async (req, res) => {
    const { store, body, cluster } = await healthBody(sources, req);
    if (sources.isShuttingDown()) res.status(503).json({ status: 'shutting_down', ...body });
    // In cluster mode the store is the shared Redis log: Redis unreachable is the cluster's outage, named as one.
    else if (cluster && !clusterHealthy(cluster)) res.status(503).json({ status: 'cluster_unreachable', ...body });
    else if (store.status !== 'ok') res.status(503).json({ status: 'store_failing', ...body });
    else res.json({ status: 'ok', ...body });
  };
}

/** `/health/live`: the process answers. Nothing it depends on is asked, so an engine's outage never restarts the fleet. */
export const livenessHandler: RequestHandler = (_req, res) => {
  res.json({ status: 'ok' });
};

/** `/health/ready`: whether a load balancer should send this process traffic. */
export function readinessHandler(sources: HealthSources): RequestHandler {
  return async (req, res) => {
    const { store, body, cluster } = await healthBody(sources, req);
    const problem = notReady(sources, store, cluster);
    if (problem) res.status(503).json({ status: problem, ...body });
    else res.json({ status: 'ok', ...body });
  };
}

export const healthRoute: RouteModule = {
  docs: healthRouteDocs,
  router: ({ health }) =>
    Router()
      .get('/health', healthHandler(health))
      .get('/health/live', livenessHandler)
      .get('/health/ready', readinessHandler(health)),
};
