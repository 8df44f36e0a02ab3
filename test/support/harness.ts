import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import supertest from 'supertest';
import { SimulatedClock } from 'xstate';
import type { ActorSystem, ActorSystemOptions } from '../../src/actors/system.js';
import { createActorSystem } from '../../src/actors/system.js';
import type { AppConfig } from '../../src/config.js';
import { loadConfig } from '../../src/config.js';
import { resolveFeatureFlags } from '../../src/domain/feature-flags.js';
import type { App } from '../../src/http/app.js';
import { createApp } from '../../src/http/app.js';
import { createMediaProvider } from '../../src/integrations/media.js';
import { loadKnowledgeBase } from '../../src/integrations/knowledge-base.js';
import type { SdkConfigSource } from '../../src/integrations/sdk-config-source.js';
import { openSdkConfigSource } from '../../src/integrations/sdk-config-source.js';
import type { RunningServer } from '../../src/http/server.js';
import { listen } from '../../src/http/server.js';
import { createLogger } from '../../src/logger.js';

export const START_TIME = Date.parse('2026-11-20T12:00:00.000Z');

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
}

export interface HarnessOptions {
  env?: Record<string, string>;
  sessionLogic?: ActorSystemOptions['sessionLogic'];
  /** An inspection observer for every session actor (tests of INSPECT open one with `openInspection`). */
  inspect?: ActorSystemOptions['inspect'];
  /** Another simulated clock (a `DeadlineClock`, for long runs with timers that re-arm themselves). */
  clock?: SimulatedClock;
}

/** The real express app over the real actor system, on a simulated clock, logging to memory. */
export function createHarness(options: HarnessOptions = {}): Harness {
  const config = loadConfig({ RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'debug', ...options.env });
  const clock = options.clock ?? new SimulatedClock();
  clock.set(START_TIME);
  const logs = new LogCapture();
  const logger = createLogger(config.logLevel, logs);
  const media = createMediaProvider(config);
  const mediaReady = media.ready;
  const system = createActorSystem({
    clock,
    logger,
    featureFlags: resolveFeatureFlags(mediaReady, config.featureFlagOverrides),
    sessionIdleTtlSeconds: config.sessionIdleTtlSeconds,
    sessionHibernateSeconds: config.sessionHibernateSeconds,
    maxSessions: config.maxSessions,
    sessionMaxBytes: config.sessionMaxBytes,
    memoryBudgetMb: config.memoryBudgetMb,
    activityBufferSize: config.activityBufferSize,
    sessionLogic: options.sessionLogic,
    media,
    mediaRoomPrefix: config.mediaRoomPrefix,
    reengagementInactivitySeconds: config.reengagementInactivitySeconds,
    agentContext: { knowledgeBase: loadKnowledgeBase(config.kycKbFile), refreshPolicy: config.voiceContextRefresh },
    criticalSteps: config.criticalSteps,
    inspect: options.inspect,
  });
  const sdkConfig = openSdkConfigSource({ file: config.sdkConfigFile, logger });
  const app = createApp({ config, system, logger, mediaReady, sdkConfig });
  return { app, system, clock, config, logs, http: supertest(app.express), sdkConfig, logger };
}

/** The same app on a real socket (127.0.0.1, a free port), for what supertest cannot do: streams. */
export function serve(h: Harness): Promise<RunningServer> {
  return listen(h.app, { ...h.config, port: 0, host: '127.0.0.1' }, h.logger);
}

/**
 * Moves the simulated clock forward in steps, as a real clock does. `SimulatedClock.increment`
 * runs every due timer at the end of the jump, so a timer armed by another timer's firing (the
 * idle check re-arming itself) would start late by up to the whole jump.
 */
export function advance(clock: SimulatedClock, ms: number, stepMs = 1000): void {
  for (let moved = 0; moved < ms; moved += stepMs) clock.increment(Math.min(stepMs, ms - moved));
}

/** Lets queued microtasks (actor stops after eviction) run. */
export const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
