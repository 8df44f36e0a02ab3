import { buildOpenApi } from './openapi.js';
import type { RouteDoc } from './route-doc.js';
import { activityRouteDocs } from './routes/activity.js';
import { assistantRouteDocs } from './routes/assistant.js';
import { callRouteDocs } from './routes/calls.js';
import { dropoffRouteDocs } from './routes/dropoff.js';
import { flowRouteDocs } from './routes/flows.js';
import { controlPlaneRouteDocs } from './ws/control-plane-doc.js';
import { activityStreamRouteDocs } from './routes/activity-stream.js';
import { apiReferenceRouteDocs } from './routes/api-reference.js';
import { consoleRouteDocs } from './routes/console.js';
import { contextRouteDocs } from './routes/context.js';
import { metricsRouteDocs } from './routes/metrics.js';
import { statusRouteDocs } from './routes/status.js';
import { eventRouteDocs } from './routes/events.js';
import { featureRouteDocs } from './routes/features.js';
import { healthRouteDocs } from './routes/health.js';
import { reengagementRouteDocs } from './routes/reengagement.js';
import { sdkConfigRouteDocs } from './routes/sdk-config.js';
import { sessionRouteDocs } from './routes/sessions.js';
import { triggerRouteDocs } from './routes/trigger.js';
import { voiceRouteDocs } from './routes/voice.js';
import { liveKitWebhookRouteDocs } from './routes/livekit-webhook.js';
import { agentPresenceRouteDocs } from './routes/agent-presence.js';

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
