import { buildOpenApi } from './openapi.js';
import type { RouteDoc } from './route-doc.js';
import { activityRouteDocs } from './routes/activity.routes.js';
import { assistantRouteDocs } from './routes/assistant.routes.js';
import { callRouteDocs } from './routes/calls.routes.js';
import { dropoffRouteDocs } from './routes/dropoff.routes.js';
import { flowRouteDocs } from './routes/flows.routes.js';
import { controlPlaneRouteDocs } from './ws/control-plane-doc.js';
import { activityStreamRouteDocs } from './routes/activity-stream.routes.js';
import { apiReferenceRouteDocs } from './routes/api-reference.routes.js';
import { consoleRouteDocs } from './routes/console.routes.js';
import { contextRouteDocs } from './routes/context.routes.js';
import { metricsRouteDocs } from './routes/metrics.routes.js';
import { statusRouteDocs } from './routes/status.routes.js';
import { eventRouteDocs } from './routes/events.routes.js';
import { featureRouteDocs } from './routes/features.routes.js';
import { healthRouteDocs } from './routes/health.routes.js';
import { reengagementRouteDocs } from './routes/reengagement.routes.js';
import { sdkConfigRouteDocs } from './routes/sdk-config.routes.js';
import { sessionRouteDocs } from './routes/sessions.routes.js';
import { triggerRouteDocs } from './routes/trigger.routes.js';
import { voiceRouteDocs } from './routes/voice.routes.js';
import { liveKitWebhookRouteDocs } from './routes/livekit-webhook.routes.js';
import { agentPresenceRouteDocs } from './routes/agent-presence.routes.js';

/** Every route the service answers, in the order the reference lists them. */
export const ROUTE_DOCS: RouteDoc[] = [
  ...eventRouteDocs,
  ...triggerRouteDocs,
  ...assistantRouteDocs,
  ...flowRouteDocs,
  ...dropoffRouteDocs,
  ...sdkConfigRouteDocs,
  ...activityRouteDocs,
  ...activityStreamRouteDocs,
  ...featureRouteDocs,
  ...sessionRouteDocs,
  ...voiceRouteDocs,
  ...liveKitWebhookRouteDocs,
  ...reengagementRouteDocs,
  ...contextRouteDocs,
  ...agentPresenceRouteDocs,
  ...callRouteDocs,
  ...healthRouteDocs,
  ...statusRouteDocs,
  ...metricsRouteDocs,
  ...consoleRouteDocs,
  ...controlPlaneRouteDocs,
  ...apiReferenceRouteDocs,
];

/** The OpenAPI document; it depends on nothing but the code, so the client can be generated from it offline. */
export function apiDocument(): Record<string, unknown> {
  return buildOpenApi(ROUTE_DOCS, {
    title: 'KYC voice assistant backend',
    version: '1',
    description:
      'SDK event ingestion, live sessions, voice sessions, agent context and activity. Errors answer `{"detail": "..."}` naming the problem. When API_KEY is set every route but /health, /docs and /docs/openapi.json needs `X-API-Key`.',
  });
}
