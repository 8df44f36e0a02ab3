import './sqlite-warning.js';
import type { Logger } from 'pino';
import type { PiiRules } from './privacy/rules.js';
import { realpathSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { getHeapStatistics } from 'node:v8';
import { heapLimitMbFor, oldSpaceLimitMb } from './actor-system/memory-budget.js';
import type { ActorSystemOptions } from './actor-system/system.js';
import { createActorSystem } from './actor-system/system.js';
import { actorSystemOptions } from './actor-system/system-options.js';
import type { ClusterRelease, ClusterSystem } from './cluster/cluster-system.js';
import { startClusterSystem } from './cluster/cluster-system.js';
import type { SessionHostConfig } from './config.js';
import type { AppConfig } from './config.js';
import { ConfigError, loadConfig } from './config.js';
import { createApp } from './http/app.js';
import type { BoundServer } from './http/server.js';
import { bind, serve } from './http/server.js';
import { systemClock } from './integrations/clock.js';
import type { Inspection } from './integrations/inspection.js';
import { openInspection } from './integrations/inspection.js';
import { InspectionRelayError } from './integrations/inspection-relay.js';
import type { InspectSetting } from './config/inspection-setting.js';
import { createMediaProvider } from './integrations/open-media.js';
import { missingMediaSettings } from './config/media.config.js';
import { loadKnowledgeBase } from './integrations/knowledge-base.js';
import { isLoopbackHost } from './domain/loopback.js';
import { SdkConfigFileError, openSdkConfigSource } from './integrations/sdk-config-source.js';
import { createLogger, stdoutLog } from './logger.js';
import { startHeapTrim } from './integrations/heap-trim.js';
import { sessionKeys } from './domain/session-key.js';
import { idDigestSecret } from './store/id-digest-secret.js';

type ErrorClass = abstract new (...args: never[]) => Error;

/** A bad setting stops start-up with one line naming it, not a stack trace. */
function orExit<T>(load: () => T, ...alsoExpected: ErrorClass[]): T {
  try {
    return load();
  } catch (error) {
    const expected = [ConfigError, SdkConfigFileError, ...alsoExpected];
    if (error instanceof Error && expected.some((known) => error instanceof known)) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/** The relay's address is configuration too: one that cannot be listened on stops start-up the same way. */
async function openInspectionOrExit(setting: InspectSetting, logger: Logger, rules: PiiRules): Promise<Inspection> {
  try {
    return await openInspection(setting, logger, rules);
  } catch (error) {
    if (error instanceof InspectionRelayError) {
      process.stderr.write(`invalid configuration: INSPECT: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/**
 * A port that cannot be listened on is a configuration error too: one line naming it, exit 1.
 * Taken first, before the store or anything else, so such a start leaves nothing behind.
 */
async function bindOrExit(http: AppConfig['http']): Promise<BoundServer> {
  try {
    return await bind(http);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
      process.stderr.write(`invalid configuration: PORT/HOST: cannot listen on ${http.host}:${http.port} (${code})\n`);
      process.exit(1);
    }
    throw error;
  }
}

/** The Restate endpoint's port is configuration too. */
async function startClusterOrExit(
  options: ActorSystemOptions,
  host: Extract<SessionHostConfig, { kind: 'restate' }>,
  release: ClusterRelease,
): Promise<ClusterSystem> {
  try {
    return await startClusterSystem(options, host, release);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      process.stderr.write(
        `invalid configuration: RESTATE_ENDPOINT_PORT/RESTATE_ENDPOINT_HOST: cannot listen on ${host.endpoint?.host}:${host.endpoint?.port} (${code})\n`,
      );
      process.exit(1);
    }
    throw error;
  }
}

/** Starts the service; `release` is for an entry that builds another release from this code (test-cluster/fixtures). */
export async function main(release: ClusterRelease = {}): Promise<void> {
  const config = orExit(() => loadConfig());
  const knowledgeBase = orExit(() => loadKnowledgeBase(config.voice.knowledgeBaseFile));
  const log = stdoutLog();
  const logger = createLogger(config.diagnostics.logLevel, log.destination, config.privacy.piiRules);
  log.onDropped((lines) => logger.warn({ dropped_line_count: lines }, 'log lines dropped: stdout was not read'));
  const sdkConfig = orExit(() => openSdkConfigSource({ file: config.sdk.configFile, logger }));
  const media = createMediaProvider(config.media);
  const mediaReady = media.ready;
  if (!mediaReady)
    logger.warn(
      { missing: missingMediaSettings(config.media) },
      'media not configured: voice sessions get placeholder tokens',
    );
  const bound = await bindOrExit(config.http);
  const { inspect } = config.diagnostics;
  const inspection = inspect ? await openInspectionOrExit(inspect, logger, config.privacy.piiRules) : undefined;
  // Loaded here, after sqlite-warning.js is in place: node:sqlite warns as it loads on Node 22.
  const { openStore, StoreOpenError } = await import('./store/open-store.js');
  // In cluster mode sessions live in Restate: STORE keeps nothing, and must not open a file.
  const { sessionHost } = config.cluster;
  const clustered = sessionHost.kind === 'restate';
  const store = orExit(
    () =>
      openStore(
        clustered ? { ...config.store, kind: 'memory' } : config.store,
        systemClock,
        logger,
        clustered,
        config.http.replayWindowSeconds * 1000,
        {
          webhookUrls: config.calls.webhookUrls,
          summaryModel: config.calls.summaryModel !== undefined,
          resolveWindowMs: config.calls.resolveWindowMinutes * 60_000,
        },
      ),
    StoreOpenError,
  );
  // After the store has claimed its DATA_DIR: the secret file is that directory's.
  const keys = sessionKeys(orExit(() => idDigestSecret(config)));
  await store.activity.ready?.catch((error: unknown) => {
    process.stderr.write(
      `ACTIVITY_LOG: cannot open the activity log: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  });
  logger.info({ store: store.sessions.health(), activity: store.activity.health() }, 'store open');
  const systemOptions = actorSystemOptions(config, {
    clock: systemClock,
    logger,
    store,
    media,
    knowledgeBase,
    inspect: inspection?.inspect,
  });
  const cluster =
    sessionHost.kind === 'restate' ? await startClusterOrExit(systemOptions, sessionHost, release) : undefined;
  const system = cluster?.system ?? createActorSystem(systemOptions);
  const heapTrim = startHeapTrim(logger, {
    releasedBytes: () => system.memoryBudget.releasedBytes(),
    clock: systemClock,
    afterTrim: () => store.sessions.releaseMemory?.(),
  });
  const app = createApp({ config, system, logger, mediaReady, sdkConfig, sessionKeys: keys, heapTrim });
  const running = serve(bound, app, config.http.host, logger);
  const { memoryBudgetMb } = config.sessions;
  const oldSpaceMb = oldSpaceLimitMb([...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)]);
  // V8's heap limit also counts its young generation (about 192 MB on Node 24), so the old space is what is compared.
  if (oldSpaceMb === undefined || oldSpaceMb > heapLimitMbFor(memoryBudgetMb)) {
    logger.warn(
      {
        max_old_space_size_mb: oldSpaceMb ?? null,
        heap_limit_mb: Math.round(getHeapStatistics().heap_size_limit / 2 ** 20),
        memory_budget_mb: memoryBudgetMb,
      },
      `V8 may let garbage grow past MEMORY_BUDGET_MB: start node with --max-old-space-size=${heapLimitMbFor(memoryBudgetMb)} (npm start does)`,
    );
  }
  if (!isLoopbackHost(config.http.host) && config.http.apiKeys.length === 0) {
    logger.warn(
      { host: config.http.host },
      'listening beyond loopback with no API_KEY: anyone who can reach this port can read and change sessions',
    );
  }

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const graceMs = config.http.shutdownGraceSeconds * 1000;
    const deadline = setTimeout(() => {
      logger.warn('shutdown grace period over; exiting');
      // The line above gets a moment to be written. (A stdout whose reader keeps it open and reads
      // nothing can still hold the exit once its pipe is full: docs/reference/limits.md.)
      void Promise.race([log.settled(), delay(1000)]).then(() => process.exit(0));
    }, graceMs + 500);
    deadline.unref();
    heapTrim.stop();
    void running.close(graceMs).then(async () => {
      await cluster?.close();
      system.stop();
      sdkConfig.close();
      await inspection?.close();
      logger.info('stopped');
      await log.settled();
      process.exit(0);
    });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

/** Run as the entry (node dist/src/main.js, tsx src/main.ts); imported, it starts nothing. */
const entry = process.argv[1];
if (entry !== undefined && realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url))) void main();
