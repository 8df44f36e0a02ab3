import type { RouteModule } from './route-module.js';
import { activityStreamRoute } from './routes/activity-stream.routes.js';
import { activityRoute } from './routes/activity.routes.js';
import { agentPresenceRoute } from './routes/agent-presence.routes.js';
import { apiReferenceRoute, openApiRoute } from './routes/api-reference.routes.js';
import { assistantRoute } from './routes/assistant.routes.js';
import { callRoute } from './routes/calls.routes.js';
import { consoleRoute } from './routes/console.routes.js';
import { contextRoute } from './routes/context.routes.js';
import { controlPlaneRoute } from './routes/control-plane.routes.js';
import { dropoffRoute } from './routes/dropoff.routes.js';
import { eventRoute } from './routes/events.routes.js';
import { featureRoute } from './routes/features.routes.js';
import { flowRoute } from './routes/flows.routes.js';
import { healthRoute } from './routes/health.routes.js';
import { liveKitWebhookRoute } from './routes/livekit-webhook.routes.js';
import { metricsRoute } from './routes/metrics.routes.js';
import { reengagementRoute } from './routes/reengagement.routes.js';
import { sdkConfigRoute } from './routes/sdk-config.routes.js';
import { sessionRoute } from './routes/sessions.routes.js';
import { statusRoute } from './routes/status.routes.js';
import { triggerRoute } from './routes/trigger.routes.js';
import { voiceRoute } from './routes/voice.routes.js';

/**
 * Every route module, in the order the reference lists them. The app mounts each behind the gates
 * its routes' docs name (route-module.ts), and the OpenAPI document, the method gate and the
 * README's endpoint table (test/api/readme-endpoints.test.ts) are read from the same list.
 */
export const ROUTES: readonly RouteModule[] = [
  eventRoute,
  triggerRoute,
  assistantRoute,
  flowRoute,
  dropoffRoute,
  sdkConfigRoute,
  activityRoute,
  activityStreamRoute,
  featureRoute,
  sessionRoute,
  voiceRoute,
  liveKitWebhookRoute,
  reengagementRoute,
  contextRoute,
  agentPresenceRoute,
  callRoute,
  healthRoute,
  statusRoute,
  metricsRoute,
  consoleRoute,
  controlPlaneRoute,
  openApiRoute,
  apiReferenceRoute,
];
