import type { ActorSystem, ActorSystemOptions } from '../actors/system.js';
import { createHostedSystem } from '../actors/system.js';
import type { SessionHostConfig } from '../config.js';
import { RedisCommandFanout } from './command-fanout.js';
import { RemoteSessionHost } from './remote-host.js';
import { RestateHttp } from './restate-http.js';
import type { SessionEndpoint } from './session-endpoint.js';
import { serveSessionEndpoint } from './session-endpoint.js';
import type { SessionObject, SharedActivityLog } from './session-object.js';
import { sessionObject } from './session-object.js';
import type { StateMigration } from './state-versions.js';

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
 * endpoint, and its event loop only answers clients (docs/cluster.md, "Fronts").
 */
export async function startClusterSystem(options: ActorSystemOptions, host: Extract<SessionHostConfig, { kind: 'restate' }>, release: ClusterRelease = {}): Promise<ClusterSystem> {
  const shared = options.store.activity;
  if (!shared.writeNow) throw new Error('SESSION_HOST=restate: the activity log must be one every process shares (ACTIVITY_LOG=redis://…)');
  const activity: SharedActivityLog = { writeNow: shared.writeNow.bind(shared) };
  const commands = new RedisCommandFanout(host.redisUrl, options.logger);
  const ingress = new RestateHttp(host.ingressUrl);
  const admin = new RestateHttp(host.adminUrl);
  let object: SessionObject | undefined;
  const system = createHostedSystem(options, (parts) => {
    if (host.endpoint) object = sessionObject({
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
  system.clusterHealth = () => system.supervisor.health();
  // Sessions are not kept here: what this process keeps is the activity log.
  system.storeHealth = () => options.store.activity.health();
  const endpoint = host.endpoint && object ? await serveSessionEndpoint(object, host.endpoint, options.logger) : undefined;
  // Subscribed before serving: a command pushed once this process answers must find it listening.
  await commands.ready.catch((error: unknown) => {
    throw new Error(`ACTIVITY_LOG: cannot subscribe to the command channel: ${error instanceof Error ? error.message : String(error)}`);
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
