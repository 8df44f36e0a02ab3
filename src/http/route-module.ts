import type { Request, Router } from 'express';
import type { ClusterHealth } from '../actor-system/cluster-health.js';
import type { MemoryUse } from '../actor-system/memory-budget.js';
import type { StoreHealth } from '../store/ports.js';
import type { AgentPresence } from '../use-cases/agent-presence.js';
import type { ConnectionKind, ConnectionCounts } from './connection-counts.js';
import type { AppDeps } from './deps.js';
import type { RouteDoc } from './route-doc.js';
import type { ActivityStreamHub } from './sse/activity-stream-hub.js';

/** What the health probes read. */
export interface HealthSources {
  isShuttingDown: () => boolean;
  /** Present in cluster mode only. */
  cluster?: (() => Promise<ClusterHealth>) | undefined;
  store: () => StoreHealth;
  memory: () => MemoryUse;
  connections: () => Record<ConnectionKind, number>;
  /**
   * Whether the request carries one of API_KEY's keys. The probes answer anyone, so only then does
   * the store say where its file lives (docs/explanation/security.md, Keys).
   */
  keyGiven: (req: Request) => boolean;
}

/** What the app builds once and every route module may use besides AppDeps. */
export interface RouteDeps extends AppDeps {
  /** The OpenAPI document, serialized (api-document.ts). */
  openapi: Buffer;
  activityStreams: ActivityStreamHub;
  connections: ConnectionCounts;
  agentPresence: AgentPresence;
  health: HealthSources;
}

/**
 * A route module: the routes' documentation and the router that answers them, together. The app
 * and the OpenAPI document both read the one list of modules (route-list.ts), so a route is added
 * in two places: its module and that list (docs/how-to/add-a-route.md).
 */
export interface RouteModule {
  docs: readonly RouteDoc[];
  router(deps: RouteDeps): Router;
  /**
   * Answered ahead of every other router, past the gates its routes pass and nothing else: for
   * the SDK events, most of the traffic (docs/explanation/architecture.md, "The HTTP layer").
   */
  first?: boolean;
}

/**
 * The gates a request passes before a module's router, in the order the app mounts them:
 * `probe` routes answer even while shutting down; `open` ones are past the shutdown gate only;
 * `unkeyed` ones are rate limited too; `keyed` ones also need X-API-Key and have their JSON body read.
 * They follow from what the docs say of each route, so the document and the app cannot disagree.
 */
export type Gate = 'probe' | 'open' | 'unkeyed' | 'keyed';

function gateOfDoc(doc: RouteDoc): Gate {
  if (doc.shutdownGated === false) return 'probe';
  if (doc.rateLimited === false) return 'open';
  if (doc.authenticated === false) return 'unkeyed';
  return 'keyed';
}

/** The gate of a module's routes; a module whose routes would need different gates is a mistake, named at start-up. */
export function gateOf(module: RouteModule): Gate {
  const gates = new Set(module.docs.map(gateOfDoc));
  const [gate, ...others] = gates;
  if (!gate || others.length > 0) {
    const paths = module.docs.map((doc) => `${doc.method.toUpperCase()} ${doc.path}`).join(', ');
    throw new Error(`a route module's routes must pass the same gates, and it needs at least one: ${paths}`);
  }
  return gate;
}

/** An OpenAPI path (`/api/calls/{call_id}`) as express matches it (`/api/calls/:call_id`). */
export const expressPath = (path: string): string => path.replace(/\{(\w+)\}/g, ':$1');
