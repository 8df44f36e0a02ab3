import type { ActorSystem, ActorSystemOptions, HostParts } from '../actor-system/system.js';
import { createHostedSystem } from '../actor-system/system.js';
import type { SessionHostConfig } from '../config.js';
import { RedisCommandFanout } from './command-fanout.js';
import { RemoteSessionHost } from './remote-host.js';
import { RestateHttp } from './restate-http.js';
import type { EndpointServices, SessionEndpoint } from './session-endpoint.js';
import { serveSessionEndpoint } from './session-endpoint.js';
import type { SharedActivityLog } from './session-object.js';
import { callsObject } from './call-book-object.js';
import { erasureObject } from './erasure-object.js';
import { remoteCallRecords } from './remote-call-records.js';
import { webhookObject } from './webhook-object.js';
import { sessionObject } from './session-object.js';
import type { StateMigration } from './state-versions.js';

/** How long a read of calls or deliveries waits for Restate. */
const READ_TIMEOUT_MS = 15_000;

/** What a release brings besides its code's defaults: a test builds the next release by passing more state steps. */
export interface ClusterRelease {
  stateMigrations?: readonly StateMigration[];
}

export interface ClusterSystem {
  system: ActorSystem<RemoteSessionHost>;
  /** The session objects' endpoint this process serves to the Restate server; none on a front (CLUSTER_ROLE=front). */
  endpoint: SessionEndpoint | undefined;
  /** Stops serving the endpoint and leaves the command channel (shutdown). */
  close(): Promise<void>;
}

/**
 * SESSION_HOST=restate: the routes reach sessions through the Restate ingress, and this process also
 * serves the session objects' endpoint, so every process is both a stateless front and a place
 * where Restate may run any session's next invocation; a front (CLUSTER_ROLE=front) serves no
 * endpoint, and its event loop only answers clients (docs/explanation/cluster.md, "Fronts").
 */
export async function startClusterSystem(
  options: ActorSystemOptions,
  host: Extract<SessionHostConfig, { kind: 'restate' }>,
  release: ClusterRelease = {},
): Promise<ClusterSystem> {
  const shared = options.store.activity;
  if (!shared.writeNow || !shared.eraseShared)
    throw new Error('SESSION_HOST=restate: the activity log must be one every process shares (ACTIVITY_LOG=redis://…)');
  const activity: SharedActivityLog = { writeNow: shared.writeNow.bind(shared) };
  const eraseShared = shared.eraseShared.bind(shared);
  const commands = new RedisCommandFanout(host.redisUrl, options.logger, { clock: options.clock });
  const ingress = new RestateHttp(host.ingressUrl);
  const admin = new RestateHttp(host.adminUrl);
  let services: EndpointServices | undefined;
  const system = createHostedSystem(options, (parts) => {
    if (host.endpoint)
      services = endpointServices(options, parts, {
        activity,
        eraseShared,
        commands,
        admin,
        release,
        journalRetentionMs: host.endpoint.journalRetentionMs,
      });
    return new RemoteSessionHost({
      ingress,
      admin,
      clock: options.clock,
      logger: options.logger,
      activity: options.store.activity,
      settings: parts.settings,
      askTimeoutMs: parts.askTimeoutMs,
      commands,
    });
  });
  system.clusterHealth = () => system.sessionHost.health();
  system.callRecords = remoteCallRecords({ ingress, admin, timeoutMs: READ_TIMEOUT_MS });
  // Sessions are not kept here: what this process keeps is the activity log.
  system.storeHealth = () => options.store.activity.health();
  const endpoint =
    host.endpoint && services ? await serveSessionEndpoint(services, host.endpoint, options.logger) : undefined;
  // Subscribed before serving: a command pushed once this process answers must find it listening.
  await commands.ready.catch((error: unknown) => {
    throw new Error(
      `ACTIVITY_LOG: cannot subscribe to the command channel: ${error instanceof Error ? error.message : String(error)}`,
    );
  });
  return {
    system,
    endpoint,
    close: async () => {
      await endpoint?.close();
      commands.close();
      await Promise.all([ingress.close(), admin.close()]);
    },
  };
}

interface EndpointParts {
  activity: SharedActivityLog;
  eraseShared: (sessionIds: ReadonlySet<string>, userId: string) => Promise<number>;
  commands: RedisCommandFanout;
  admin: RestateHttp;
  release: ClusterRelease;
  journalRetentionMs: number;
}

/**
 * The objects this process serves to Restate: the sessions, and their call books, webhook
 * deliveries and erasures (docs/decisions/0036-calls-in-cluster-mode.md).
 */
function endpointServices(
  options: ActorSystemOptions,
  parts: HostParts,
  { activity, eraseShared, commands, admin, release, journalRetentionMs }: EndpointParts,
): EndpointServices {
  const { calls } = options;
  const webhookUrls = calls?.webhookUrls ?? [];
  const resolveWindowMs = calls?.resolveWindowMs ?? 0;
  const notSent = () => Promise.resolve({ ok: false as const, status: null, error: 'no webhook sender' });
  return [
    sessionObject({
      sessionLogic: parts.baseLogic,
      settings: parts.settings,
      media: options.media,
      logger: options.logger,
      observers: { metrics: parts.metrics, calls: parts.mediaCalls },
      activity,
      commands,
      sources: options.agentContext,
      inspect: options.inspect,
      stateMigrations: release.stateMigrations,
      callResolveWindowMs: resolveWindowMs,
      journalRetentionMs,
    }),
    callsObject({
      webhookUrls,
      retentionDays: calls?.retentionDays ?? 0,
      resolveWindowMs,
      summarize: calls?.summarize,
    }),
    webhookObject({ send: calls?.send ?? notSent }),
    erasureObject({ admin, activity: { erase: eraseShared }, webhookUrls, queryTimeoutMs: parts.askTimeoutMs }),
  ];
}
