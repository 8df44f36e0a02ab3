import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import supertest from 'supertest';
import { SimulatedClock } from 'xstate';
import type { ActorSystem, ActorSystemOptions } from '../../src/actor-system/system.js';
import { createActorSystem } from '../../src/actor-system/system.js';
import { actorSystemOptions } from '../../src/actor-system/system-options.js';
import type { AppConfig } from '../../src/config.js';
import { loadConfig } from '../../src/config.js';
import type { App } from '../../src/http/app.js';
import { sessionKeys } from '../../src/domain/session-key.js';
import { createApp } from '../../src/http/app.js';
import type { KernelSendQueues } from '../../src/integrations/kernel-send-queues.js';
import { createMediaProvider } from '../../src/integrations/open-media.js';
import { loadKnowledgeBase } from '../../src/integrations/knowledge-base.js';
import type { SdkConfigSource } from '../../src/integrations/sdk-config-source.js';
import { openSdkConfigSource } from '../../src/integrations/sdk-config-source.js';
import type { RunningServer } from '../../src/http/server.js';
import { listen } from '../../src/http/server.js';
import { createLogger } from '../../src/logger.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/ports.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';

/** One digest secret per test process, as a service has one per process: a harness started again on the same store finds its sessions. */
const HARNESS_SESSION_KEYS = sessionKeys(randomBytes(32));

export const START_TIME = Date.parse('2026-11-20T12:00:00.000Z');

/** The store every harness uses unless its env names one: the suite runs once per store (vitest.config.ts). */
export const TEST_STORE = process.env.TEST_STORE === 'sqlite' ? 'sqlite' : 'memory';

let tempRoot: string | undefined;
/**
 * A fresh data directory, under the run's temporary directory (test/support/run-temp-dir.ts sets
 * TMPDIR), which goes when the run ends: a worker's own exit handler would not run.
 */
export function tempDataDir(): string {
  tempRoot ??= mkdtempSync(join(tmpdir(), 'kyc-test-'));
  return mkdtempSync(join(tempRoot, 'data-'));
}

/** Every log line the service wrote, as text, so tests can search them. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  }
  get text(): string {
    return this.lines.join('\n');
  }
  parsed(): Record<string, unknown>[] {
    return this.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  }
}

export interface Harness {
  app: App;
  system: ActorSystem;
  clock: SimulatedClock;
  config: AppConfig;
  logs: LogCapture;
  http: ReturnType<typeof supertest>;
  /** Watches SDK_CONFIG_FILE when the env names one; close it when the test is done. */
  sdkConfig: SdkConfigSource;
  logger: Logger;
  store: Store;
  /** The id the first activity item gets (1 in SQLite; in memory it carries the process epoch). */
  firstActivityId: number;
  /** The environment it was configured from, data directory included. */
  env: Record<string, string>;
}

export interface HarnessOptions {
  env?: Record<string, string>;
  sessionLogic?: ActorSystemOptions['sessionLogic'];
  /** An inspection observer for every session actor (tests of INSPECT open one with `openInspection`). */
  inspect?: ActorSystemOptions['inspect'];
  /** Another simulated clock (a `DeadlineClock`, for long runs with timers that re-arm themselves). */
  clock?: SimulatedClock;
  /** The simulated time the clock starts at (a restart continues from where the last one stopped). */
  startAt?: number;
  /** The kernel's send queues as the app reads them (a test that must wait for a fresh reading). */
  kernelSendQueues?: KernelSendQueues;
}

/** The real express app over the real actor system, on a simulated clock, logging to memory. */
export function createHarness(options: HarnessOptions = {}): Harness {
  const storeEnv: Record<string, string> = { STORE: TEST_STORE, ...options.env };
  const dataDir: Record<string, string> =
    storeEnv.STORE === 'sqlite' && !storeEnv.DATA_DIR ? { DATA_DIR: tempDataDir() } : {};
  const env = { RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'debug', ...storeEnv, ...dataDir };
  const config = loadConfig(env);
  const clock = options.clock ?? new SimulatedClock();
  clock.set(options.startAt ?? START_TIME);
  const logs = new LogCapture();
  const logger = createLogger(config.diagnostics.logLevel, logs, config.privacy.piiRules);
  const store = openStore(config.store, clock, logger, false, config.http.replayWindowSeconds * 1000, {
    webhookUrls: config.calls.webhookUrls,
    summaryModel: config.calls.summaryModel !== undefined,
    resolveWindowMs: config.calls.resolveWindowMinutes * 60_000,
  });
  const media = createMediaProvider(config.media);
  const mediaReady = media.ready;
  const system = createActorSystem({
    ...actorSystemOptions(config, {
      clock,
      logger,
      store,
      media,
      knowledgeBase: loadKnowledgeBase(config.voice.knowledgeBaseFile),
      inspect: options.inspect,
    }),
    sessionLogic: options.sessionLogic,
  });
  const sdkConfig = openSdkConfigSource({ file: config.sdk.configFile, logger });
  const app = createApp({
    config,
    system,
    logger,
    mediaReady,
    sdkConfig,
    sessionKeys: HARNESS_SESSION_KEYS,
    kernelSendQueues: options.kernelSendQueues,
  });
  return {
    app,
    system,
    clock,
    config,
    logs,
    http: supertest(app.express),
    sdkConfig,
    logger,
    store,
    env,
    firstActivityId: store.activity.bounds().lastId + 1,
  };
}

/**
 * The process dies (what a SQLite store has not committed is lost, nothing is flushed) and
 * starts again on the same data directory, its clock where the old one stopped.
 */
export function restartAfterCrash(h: Harness, options: HarnessOptions = {}): Harness {
  // A crash takes its timers with it: the outbox's round must not run on the abandoned file.
  h.system.callUpkeep?.stop();
  if (h.store.sessions instanceof SqliteStore) h.store.sessions.abandon();
  h.sdkConfig.close();
  return createHarness({ ...options, env: { ...h.env, ...options.env }, startAt: h.clock.now() });
}

/** The same app on a real socket (127.0.0.1, a free port), for what supertest cannot do: streams. */
export function serve(h: Harness): Promise<RunningServer> {
  return listen(h.app, { ...h.config.http, port: 0, host: '127.0.0.1' }, h.logger);
}

/**
 * Moves the simulated clock forward in steps, as a real clock does. `SimulatedClock.increment`
 * runs every due timer at the end of the jump, so a timer armed by another timer's firing (the
 * idle check re-arming itself) would start late by up to the whole jump.
 */
export function advance(clock: SimulatedClock, ms: number, stepMs = 1000): void {
  for (let moved = 0; moved < ms; moved += stepMs) clock.increment(Math.min(stepMs, ms - moved));
}

/** The n-th activity item's id (from 1), whatever the store's first id. */
export const activityId = (h: Harness, n: number): string => String(h.firstActivityId + n - 1);

/** The ids of the from-th to the to-th activity items. */
export const activityIds = (h: Harness, from: number, to: number): string[] =>
  Array.from({ length: to - from + 1 }, (_, i) => activityId(h, from + i));

/** Lets queued microtasks (actor stops after eviction) run. */
export const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
