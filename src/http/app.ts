import type { Express, RequestHandler } from 'express';
import express from 'express';
import { ConnectionCounts } from './connection-counts.js';
import type { AppDeps } from './deps.js';
import { HttpError } from './http-error.js';
import { apiKeyCheck } from './middleware/api-key.js';
import { correlation } from './middleware/correlation.js';
import { errorHandler, notFound } from './middleware/errors.js';
import { jsonBody } from './middleware/json-body.js';
import { perIpRateLimit } from './middleware/rate-limit.js';
import { requestLog } from './middleware/request-log.js';
import { buildOpenApi } from './openapi.js';
import type { RouteDoc } from './route-doc.js';
import { activityRouteDocs, activityRoutes } from './routes/activity.js';
import { contextRouteDocs, contextRoutes } from './routes/context.js';
import { activityStreamRouteDocs, activityStreamRoutes } from './routes/activity-stream.js';
import { eventRouteDocs, eventRoutes } from './routes/events.js';
import { featureRouteDocs, featureRoutes } from './routes/features.js';
import { healthHandler, healthRouteDocs } from './routes/health.js';
import { reengagementRouteDocs, reengagementRoutes } from './routes/reengagement.js';
import { sdkConfigRouteDocs, sdkConfigRoutes } from './routes/sdk-config.js';
import { sessionRouteDocs, sessionRoutes } from './routes/sessions.js';
import { triggerRouteDocs, triggerRoutes } from './routes/trigger.js';
import { voiceRouteDocs, voiceRoutes } from './routes/voice.js';
import { ActivityStreamHub } from './sse/activity-stream-hub.js';

export interface App {
  express: Express;
  /** Answer every later request 503 and close its connection (graceful shutdown). */
  beginShutdown(): void;
  isShuttingDown(): boolean;
  /** The open activity streams (GET /api/activity/stream). */
  activityStreams: ActivityStreamHub;
  /** Open connections by kind, each kind capped (the server admits, streams and upgrades claim). */
  connections: ConnectionCounts;
}

const ROUTE_DOCS: RouteDoc[] = [
  ...eventRouteDocs,
  ...triggerRouteDocs,
  ...sdkConfigRouteDocs,
  ...activityRouteDocs,
  ...activityStreamRouteDocs,
  ...featureRouteDocs,
  ...sessionRouteDocs,
  ...voiceRouteDocs,
  ...reengagementRouteDocs,
  ...contextRouteDocs,
  ...healthRouteDocs,
  {
    method: 'get',
    path: '/openapi.json',
    tag: 'operations',
    summary: 'This document.',
    responses: { 200: { description: 'OpenAPI 3.1' } },
  },
];

/** How long an EventSource waits before reconnecting after the stream drops. */
const SSE_RETRY_MS = 3000;

export function createApp(deps: AppDeps): App {
  const { config, logger } = deps;
  let shuttingDown = false;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  if (config.trustProxy !== undefined) app.set('trust proxy', trustProxyValue(config.trustProxy));

  const openapi = buildOpenApi(ROUTE_DOCS, {
    title: 'KYC voice assistant backend',
    version: '1',
    description: 'SDK event ingestion, live sessions, voice sessions, agent context and activity.',
  });

  const activityStreams = new ActivityStreamHub({
    activity: deps.system.activity,
    clock: deps.system.clock,
    logger,
    maxStreams: config.sseMaxStreams,
    maxBufferBytes: config.sseMaxBufferBytes,
    heartbeatMs: config.sseHeartbeatSeconds * 1000,
    retryMs: SSE_RETRY_MS,
  });

  // No WebSocket endpoint is served yet: the one that upgrades connections brings its own cap.
  const connections = new ConnectionCounts({ http: config.maxConnections, sse: config.sseMaxStreams, websocket: 0 });

  const shutdownGate: RequestHandler = (_req, res, next) => {
    if (!shuttingDown) return next();
    res.setHeader('Connection', 'close');
    throw new HttpError(503, 'server is shutting down; retry on another instance');
  };

  app.use(correlation);
  app.use(requestLog(logger));
  app.get(
    '/health',
    healthHandler({ isShuttingDown: () => shuttingDown, memory: () => deps.system.memoryBudget.use(), connections: () => connections.snapshot() }),
  );
  app.use(shutdownGate);
  const rateLimit = perIpRateLimit(config.rateLimitPerMinute);
  if (rateLimit) app.use(rateLimit);
  const keyCheck = apiKeyCheck(config.apiKeys);
  if (keyCheck) app.use(keyCheck);
  app.use(jsonBody());
  app.get('/openapi.json', (_req, res) => {
    res.json(openapi);
  });
  app.use(eventRoutes(deps));
  app.use(triggerRoutes(deps));
  app.use(sdkConfigRoutes(deps));
  app.use(activityRoutes(deps));
  app.use(activityStreamRoutes(activityStreams, config.sseMaxStreams, connections));
  app.use(featureRoutes(deps));
  app.use(sessionRoutes(deps));
  app.use(voiceRoutes(deps));
  app.use(reengagementRoutes(deps));
  app.use(contextRoutes(deps));
  app.use(notFound);
  app.use(errorHandler(logger));

  return {
    express: app,
    beginShutdown: () => {
      shuttingDown = true;
      // Open streams would otherwise keep server.close() waiting for the whole grace period.
      activityStreams.closeAll();
    },
    isShuttingDown: () => shuttingDown,
    activityStreams,
    connections,
  };
}

/** TRUST_PROXY as express understands it: a hop count, true/false, or addresses/subnets. */
function trustProxyValue(raw: string): boolean | number | string {
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  if (/^\d+$/.test(raw)) return Number(raw);
  return raw;
}
