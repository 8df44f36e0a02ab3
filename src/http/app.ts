import type { Express, Request, RequestHandler } from 'express';
import express from 'express';
import { ROUTE_DOCS, apiDocumentJson } from './api-document.js';
import { ROUTES } from './route-list.js';
import type { Gate, RouteDeps } from './route-module.js';
import { expressPath, gateOf } from './route-module.js';
import type { RouteDoc } from './route-doc.js';
import { ConnectionCounts } from './connection-counts.js';
import type { AppDeps } from './deps.js';
import { HttpError } from './http-error.js';
import { apiKeyCheck, keyGiven } from './middleware/api-key.js';
import { idempotencyContext } from './middleware/idempotency-key.js';
import { correlation } from './middleware/correlation.js';
import { errorHandler, notFound } from './middleware/errors.js';
import { httpMetrics } from './middleware/http-metrics.js';
import { inSequence } from './middleware/in-sequence.js';
import { jsonBody } from './middleware/json-body.js';
import { methodGate } from './middleware/method-gate.js';
import { pageTurns } from './middleware/page-turns.js';
import { perIpRateLimit } from './middleware/rate-limit.js';
import type { StoredAnswer } from './middleware/replays.js';
import { replays } from './middleware/replays.js';
import { ReplayWindow, replayBounds } from './replay-window.js';
import { UnreadAnswers } from './unread-answers.js';
import { requestLog } from './middleware/request-log.js';
import { AgentPresence } from '../use-cases/agent-presence.js';
import { ActivityStreamHub } from './sse/activity-stream-hub.js';
import {
  requestBodyBudgetBytes,
  streamBufferBudgetBytes,
  unreadAnswerBudgetBytes,
} from '../actor-system/memory-budget.js';
import { LargeBodyTurns } from './large-body-turns.js';
import { RequestBodies } from './request-bodies.js';
import { kernelSendQueues } from '../integrations/kernel-send-queues.js';
import { ControlPlane } from './ws/control-plane.js';
import { hostGate } from './middleware/host-gate.js';
import { createPiiRules } from '../privacy/rules.js';
import type { AnswerFrame } from './ws/control-socket.js';

export interface App {
  express: Express;
  /** Answer every later request 503 and close its connection (graceful shutdown). */
  beginShutdown(): void;
  isShuttingDown(): boolean;
  /** The open activity streams (GET /api/activity/stream). */
  activityStreams: ActivityStreamHub;
  /** The WebSocket control plane (GET /v1/events/ws); the server hands it its `upgrade` events. */
  controlPlane: ControlPlane;
  /** Open connections by kind, each kind capped (the server admits, streams and upgrades claim). */
  connections: ConnectionCounts;
  /** The request bodies still arriving, charged to their share of MEMORY_BUDGET_MB. */
  requestBodies: RequestBodies;
  /** What node holds of answers their clients have not read, held to their share of MEMORY_BUDGET_MB. */
  unreadAnswers: UnreadAnswers;
}

/** How long a connection without a key is left alone before a newcomer may take its place (connection-counts.ts). */
const UNPROVEN_GRACE_MS = 1000;

/** How long an EventSource waits before reconnecting after the stream drops. */
const SSE_RETRY_MS = 3000;

export function createApp(given: AppDeps): App {
  const deps = withIdDigest(given);
  const { config, logger } = deps;
  const { http, stream } = config;
  let shuttingDown = false;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  if (http.trustProxy !== undefined) app.set('trust proxy', trustProxyValue(http.trustProxy));

  const openapi = apiDocumentJson();

  const kernel = deps.kernelSendQueues ?? kernelSendQueues();
  const activityStreams = new ActivityStreamHub({
    kernel,
    activity: deps.system.activity,
    live: deps.system.activityActor,
    clock: deps.system.clock,
    logger,
    maxStreams: stream.maxStreams,
    maxBufferBytes: stream.maxBufferBytes,
    maxTotalBufferBytes: streamBufferBudgetBytes(config.sessions.memoryBudgetMb),
    heartbeatMs: stream.heartbeatSeconds * 1000,
    retryMs: SSE_RETRY_MS,
  });
  deps.system.metrics.sources.sseStreams = () => activityStreams.stats().streams;

  // Requests, activity streams and control-plane WebSockets each count against a cap of their own,
  // so open streams and sockets never use up the connections requests need.
  const connections = new ConnectionCounts(
    { http: http.maxConnections, sse: stream.maxStreams, websocket: config.websocket.maxConnections },
    { perClient: http.maxUnauthenticatedPerClient, graceMs: UNPROVEN_GRACE_MS, now: () => deps.system.clock.now() },
  );
  const proveConnection = (req: Request) => connections.prove(req.socket);
  const replayWindow = <T>() =>
    http.replayWindowSeconds > 0
      ? new ReplayWindow<T>(replayBounds(http.replayWindowSeconds, deps.system.clock))
      : undefined;
  // One queue for large bodies and large frames alike: each takes a turn of its own (large-body-turns.ts).
  const largeBodies = new LargeBodyTurns();
  const controlPlane = new ControlPlane(deps, connections, replayWindow<AnswerFrame>(), kernel, largeBodies);

  const agentPresence = new AgentPresence({
    host: deps.system.sessionHost,
    agents: deps.system.agents,
    clock: deps.system.clock,
    roomPrefix: config.media.roomPrefix,
    logger,
  });

  const shutdownGate: RequestHandler = (_req, res, next) => {
    if (!shuttingDown) return next();
    res.setHeader('Connection', 'close');
    throw new HttpError(503, 'server is shutting down; retry on another instance');
  };

  // With no API_KEY every client is a known one: its first request proves its connection.
  const provenWithoutKey: RequestHandler | undefined =
    http.apiKeys.length === 0 ? (req, _res, next) => (proveConnection(req), next()) : undefined;
  // Every answer, probes included, counts what its client leaves unread (unread-answers.ts).
  const unreadAnswers = new UnreadAnswers(unreadAnswerBudgetBytes(config.sessions.memoryBudgetMb), logger, kernel);
  app.use(
    inSequence(
      unreadAnswers.track,
      correlation(deps.sessionKeys.idDigest),
      requestLog(logger),
      httpMetrics(deps.system.metrics),
      ...present(provenWithoutKey),
    ),
  );
  // Ahead of the health probes too: TRACE /health is as undeclared as TRACE /v1/events.
  app.use(methodGate(ROUTE_DOCS));
  const health = {
    isShuttingDown: () => shuttingDown,
    store: deps.system.storeHealth,
    cluster: deps.system.clusterHealth,
    memory: () => deps.system.memoryBudget.use(),
    connections: () => connections.snapshot(),
    keyGiven: keyGiven(http.apiKeys),
  };
  const routeDeps: RouteDeps = { ...deps, openapi, activityStreams, connections, agentPresence, health };
  const mount = (gate: Gate) => {
    for (const module of ROUTES) if (!module.first && gateOf(module) === gate) app.use(module.router(routeDeps));
  };
  mount('probe');
  // After the probes: a load balancer's probe may name the service however it likes.
  const served = hostGate(http);
  if (served) app.use(served);
  app.use(shutdownGate);
  const rateLimit = perIpRateLimit(http.rateLimitPerMinute, { loopback: http.rateLimitLoopback });
  const keyCheck = apiKeyCheck(http.apiKeys, proveConnection);
  const requestBodies = new RequestBodies(
    requestBodyBudgetBytes(config.sessions.memoryBudgetMb),
    deps.system.clock,
    logger,
  );
  const body = jsonBody(requestBodies, largeBodies);
  // After the body is read: a replay is the same request only if it carries the same body.
  const httpReplays = replayWindow<StoredAnswer>();
  const replayGuard = httpReplays ? replays(httpReplays, deps.system.keptReply) : undefined;
  // After the body is read: the body's stream events would run outside the key's async context.
  const idempotency = config.cluster.sessionHost.kind === 'restate' ? idempotencyContext : undefined;
  // SDK events are most of the traffic: routed first, through the same gates and body reading as
  // every other keyed route below, and past nothing else (docs/explanation/architecture.md, "The HTTP layer").
  for (const module of ROUTES.filter((m) => m.first)) {
    const router = module.router(routeDeps);
    for (const doc of module.docs) {
      app[doc.method](
        expressPath(doc.path),
        ...present(rateLimit, keyCheck),
        ...body,
        ...present(idempotency, replayGuard),
        router,
      );
    }
  }
  mount('open');
  if (rateLimit) app.use(rateLimit);
  // The reference page loads without a key, like /health; its "try it" requests carry the key entered.
  // The media server's webhooks are signed, not keyed: before the key check and the JSON body.
  mount('unkeyed');
  if (keyCheck) app.use(keyCheck);
  app.use(body);
  if (idempotency) app.use(idempotency);
  if (replayGuard) app.use(replayGuard);
  // Past the key check: a client without one is refused in the turn that reads its request.
  const pages = pagePaths(ROUTE_DOCS);
  if (pages.length > 0) app.get(pages, pageTurns(largeBodies));
  mount('keyed');
  app.use(notFound);
  app.use(errorHandler(logger));

  return {
    express: app,
    beginShutdown: () => {
      shuttingDown = true;
      // Open streams would otherwise keep server.close() waiting for the whole grace period.
      activityStreams.closeAll();
      controlPlane.closeAll();
      agentPresence.closeAll();
    },
    isShuttingDown: () => shuttingDown,
    activityStreams,
    controlPlane,
    connections,
    requestBodies,
    unreadAnswers,
  };
}

/** The paths of list pages: the GET routes whose query takes a `limit` (middleware/page-turns.ts). */
const pagePaths = (docs: readonly RouteDoc[]): string[] =>
  docs
    .filter((doc) => doc.method === 'get' && doc.query?.shape.limit !== undefined)
    .map((doc) => expressPath(doc.path));

const present = (...handlers: (RequestHandler | undefined)[]): RequestHandler[] =>
  handlers.filter((handler) => handler !== undefined);

/** TRUST_PROXY as express understands it: a hop count, true/false, or addresses/subnets. */
function trustProxyValue(raw: string): boolean | number | string {
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  if (/^\d+$/.test(raw)) return Number(raw);
  return raw;
}

/**
 * What clients send is redacted with the session keys' digest at hand, so an id that is no
 * identifier (a user id that is a mobile number) is kept as its digest, the one the session keys
 * use, rather than masked whole (docs/explanation/privacy.md, "What is kept"). The log's rules have no digest.
 */
function withIdDigest(deps: AppDeps): AppDeps {
  const privacy = {
    ...deps.config.privacy,
    piiRules: createPiiRules(deps.config.privacy.piiExtraKeys, deps.sessionKeys.idDigest),
  };
  return { ...deps, config: { ...deps.config, privacy } };
}
