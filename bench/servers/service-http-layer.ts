/**
 * The service's HTTP layer alone: the real app (middleware, gates, body reading, validation,
 * redaction, the route and its answer) on the real actor system, except that an SDK event is
 * answered as ingested without the session's step: answered when the supervisor would deliver it,
 * with the other commands of its event-loop turn (command-batch.ts), so requests are answered in
 * the same rhythm as the service's. The ingestion suite runs it beside the service and bare
 * express, so the table splits a request's cost into the HTTP layer and the step.
 */
import { randomBytes } from 'node:crypto';
import { CommandBatch } from '../../src/actor-system/command-batch.js';
import { createActorSystem } from '../../src/actor-system/system.js';
import { actorSystemOptions } from '../../src/actor-system/system-options.js';
import type { SessionHost } from '../../src/actor-system/session-host.js';
import type { AskResult, Routing } from '../../src/actor-system/session-host.js';
import type { Reply, SessionCommand } from '../../src/machines/session/machine-events.js';
import { loadConfig } from '../../src/config.js';
import { sessionKeys } from '../../src/domain/session-key.js';
import { createApp } from '../../src/http/app.js';
import { listen } from '../../src/http/server.js';
import { systemClock } from '../../src/integrations/clock.js';
import { loadKnowledgeBase } from '../../src/integrations/knowledge-base.js';
import { createMediaProvider } from '../../src/integrations/open-media.js';
import { openSdkConfigSource } from '../../src/integrations/sdk-config-source.js';
import { createLogger } from '../../src/logger.js';
import { openStore } from '../../src/store/open-store.js';

const config = loadConfig();
const logger = createLogger(config.diagnostics.logLevel, undefined, config.privacy.piiRules);
const media = createMediaProvider(config.media);
const system = createActorSystem(
  actorSystemOptions(config, {
    clock: systemClock,
    logger,
    store: openStore(config.store, systemClock),
    media,
    knowledgeBase: loadKnowledgeBase(config.voice.knowledgeBaseFile),
  }),
);

const sessions = system.sessionHost;
const turn = new CommandBatch((error) => logger.error({ err: error }, 'delivery failed'));
/** Every other command reaches its session; an SDK event is answered as the session would, without it. */
const stepless: SessionHost = {
  ask<T>(
    sessionId: string,
    routing: Routing,
    build: (reply: Reply<T>, at: number) => SessionCommand,
  ): Promise<AskResult<T>> {
    let answered: Reply<T> | undefined;
    const answer = new Promise<AskResult<T>>((resolve) => (answered = (value) => resolve({ ok: true, value })));
    const command = build(answered!, systemClock.now());
    if (command.type !== 'session.ingest') return sessions.ask(sessionId, routing, build);
    turn.add(() => command.reply({ ingested_at_ms: command.at, warnings: [] }));
    return answer;
  },
  ingest(sessionId, build) {
    return this.ask(sessionId, 'create', build);
  },
  snapshot: (sessionId) => sessions.snapshot(sessionId),
  list: (query) => sessions.list(query),
  commitOutcome: () => sessions.commitOutcome(),
  get counts() {
    return sessions.counts;
  },
  subscribe: (sessionId, listener) => sessions.subscribe(sessionId, listener),
  stopAll: () => sessions.stopAll(),
};
const app = createApp({
  config,
  system: { ...system, sessionHost: stepless },
  logger,
  mediaReady: media.ready,
  sdkConfig: openSdkConfigSource({ file: config.sdk.configFile, logger }),
  sessionKeys: sessionKeys(randomBytes(32)),
});
const running = await listen(app, config.http, logger);
process.on('SIGTERM', () => void running.close(1000).then(() => process.exit(0)));
