import type { Logger } from 'pino';
import type { InspectionEvent, Observer } from 'xstate';
import type { AgentContextSources } from '../domain/agent-context.js';
import type { FeatureFlags } from '../domain/feature-flags.js';
import { HANDOFF_UNANSWERED } from '../domain/sdk-event.js';
import type { TriggerDecision } from '../domain/trigger-policy.js';
import type { AppClock } from '../integrations/clock.js';
import type { AgentRemover, MediaProvider, TokenMinter } from '../integrations/media-port.js';
import type { Summarizer } from '../integrations/summary-model.js';
import type { WebhookSender } from '../integrations/webhook-sender.js';
import { CallUpkeep } from './call-upkeep.js';
import type { CallRecords } from './call-records.js';
import { localCallRecords } from './call-records.js';
import type { SessionSettings } from '../machines/session/session-context.js';
import type { SessionMachine } from '../machines/session/machine.js';
import { withDirectIngest } from '../machines/session/direct-ingest.js';
import { sessionMachine } from '../machines/session/machine.js';
import { MAX_WAITING_VOICE_COMMANDS } from '../machines/session/media-contract.js';
import { MEDIA_CALLS_PER_START } from '../domain/voice-session.js';
import type { ActivityLog, CommitOutcome, KeptReply, Store, StoreHealth, UserErasure } from '../store/ports.js';
import type { CallBook } from '../store/call-book.js';
import type { ClusterHealth } from './cluster-health.js';
import type { StatelessTriggerRequest } from './stateless-trigger.js';
import { evaluateWithoutSession } from './stateless-trigger.js';
import type { FlowGraphSighting } from './flow-graphs.js';
import { createFlowGraphs } from './flow-graphs.js';
import { activityCounter } from '../metrics/activity-metrics.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import { createServiceMetrics } from '../metrics/service-metrics.js';
import { mediaActors } from './media-actors.js';
import { ActivityActor } from './activity-actor.js';
import { MediaCallLog } from './media-call-log.js';
import { MemoryBudget } from './memory-budget.js';
import type { SessionHost } from './session-host.js';
import { SessionSupervisor } from './supervisor.js';
import { AgentNotices } from './agent-notices.js';

export interface ActorSystemOptions {
  clock: AppClock;
  logger: Logger;
  featureFlags: FeatureFlags;
  /** What every session is started with (`sessionSettings` in system-options.ts makes them from the configuration). */
  settings: SessionSettings;
  /** SESSION_HIBERNATE_SECONDS: an untouched session with nothing under way is held as its context alone after this long; 0 never. */
  sessionHibernateSeconds: number;
  maxSessions: number;
  /** Where sessions and activity are kept (STORE): in memory, or SQLite under DATA_DIR. */
  store: Store;
  /** MEMORY_BUDGET_MB: what all sessions together may cost. */
  memoryBudgetMb: number;
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void) | undefined;
  /** The session machine to run; tests substitute a variant to prove failure isolation. */
  sessionLogic?: SessionMachine;
  /** LiveKit, or the placeholder when credentials are missing; the session machine sees only its promise actors. */
  media: MediaProvider;
  /** Knowledge base and refresh policy for voice-agent context, loaded once at start-up. */
  agentContext: AgentContextSources;
  /** How the webhook outbox is sent and how long calls are kept (docs/reference/webhooks.md, docs/explanation/calls.md); none, nothing is sent or removed. */
  calls?: CallsOptions | undefined;
}

/** How calls are kept and announced (docs/explanation/calls.md, docs/reference/webhooks.md). */
export interface CallsOptions {
  send: WebhookSender;
  retentionDays: number;
  summarize?: Summarizer | undefined;
  /** WEBHOOK_URL; the local store gets it when opened, cluster mode's objects from here. */
  webhookUrls?: readonly string[] | undefined;
  /** CALL_RESOLVE_WINDOW_MINUTES, in ms (as webhookUrls). */
  resolveWindowMs?: number | undefined;
}

/** `sessionHost` is where sessions run: this process's `SessionSupervisor` unless the system was built with another host. */
export interface ActorSystem<Host extends SessionHost = SessionSupervisor> {
  clock: AppClock;
  /** The activity log: the source of truth for reads and resumes. */
  activity: ActivityLog;
  /** The live path: every item the log commits, given to each reader (the SSE hub, the metrics, the flow-graph recorder). */
  activityActor: ActivityActor;
  sessionHost: Host;
  memoryBudget: MemoryBudget;
  featureFlags: FeatureFlags;
  agentContext: AgentContextSources;
  /** Records `flow_graph_recorded` the first time a `(client_id, flow_key)` registers its steps; how its commit ended. */
  recordFlowGraph(sighting: FlowGraphSighting): Promise<CommitOutcome>;
  /** The service's Prometheus metrics (GET /metrics). */
  metrics: ServiceMetrics;
  /** The last media calls and their outcomes (the console's health view). */
  mediaCalls: MediaCallLog;
  /** Mints a participant token anew for a copy of a named voice start, whose kept reply holds none (src/use-cases/voice-call.ts). */
  tokens: TokenMinter;
  /** Takes an agent whose process died out of its room (src/use-cases/agent-presence.ts). */
  agents: AgentRemover;
  /** A trigger evaluation that names no session: the policy alone, recorded as activity. */
  evaluateTriggerWithoutSession(
    request: StatelessTriggerRequest,
  ): Promise<{ decision: TriggerDecision; commit: CommitOutcome }>;
  /** How the store is doing, for /health. */
  storeHealth: () => StoreHealth;
  /** Calls, consent and the webhook outbox (docs/explanation/calls.md); absent where the activity log is shared (ACTIVITY_LOG). */
  calls?: CallBook | undefined;
  /** Erases a user from the store; absent where the store cannot (cluster mode). */
  erasure?: UserErasure | undefined;
  /**
   * Calls, deliveries and erasure as the routes read and change them, here or in the cluster;
   * absent where neither keeps them (ACTIVITY_LOG with local sessions).
   */
  callRecords?: CallRecords | undefined;
  /** Delivers the webhook outbox and applies TRANSCRIPT_RETENTION_DAYS; present with `calls`. */
  callUpkeep?: CallUpkeep | undefined;
  /** SESSION_HOST=restate: whether Restate and Redis answer, for /health. */
  clusterHealth?: (() => Promise<ClusterHealth>) | undefined;
  /** A store that outlives the process (SQLite): the kept reply to a named request, by its key (named-request.ts). */
  keptReply?: ((requestKey: string) => KeptReply | undefined) | undefined;
  /** Stops every session actor, writes what is queued and closes the store. */
  stop(): void;
}

const ASK_TIMEOUT_MS = 15_000;

/**
 * A voice command may wait behind the start in progress and the commands waiting before it,
 * each start making its media calls in turn: a request must not time out while that is legitimate.
 */
function askTimeoutFor(media: MediaProvider): number {
  const longestVoiceWaitMs = (MAX_WAITING_VOICE_COMMANDS + 1) * MEDIA_CALLS_PER_START * media.callTimeoutMs;
  return Math.max(ASK_TIMEOUT_MS, longestVoiceWaitMs + 5_000);
}

/** What every host of sessions is built from. */
export interface HostParts {
  /** The session machine as given, before media actors are provided. */
  baseLogic: SessionMachine;
  settings: SessionSettings;
  metrics: ServiceMetrics;
  mediaCalls: MediaCallLog;
  memoryBudget: MemoryBudget;
  /** Notices to voice agents over the media server (context_updated); a host that runs sessions sends them. */
  agentNotices: AgentNotices;
  askTimeoutMs: number;
}

/** Bootstrap: one clock, the store (sessions and activity log), one supervisor; the session machine gets its media actors and settings. */
export function createActorSystem(options: ActorSystemOptions): ActorSystem {
  const system = createHostedSystem(
    options,
    (parts) =>
      new SessionSupervisor({
        clock: options.clock,
        logger: options.logger,
        activity: options.store.activity,
        store: options.store.sessions,
        sessionLogic: withDirectIngest(
          parts.baseLogic.provide({
            actors: mediaActors(options.media, options.logger, { metrics: parts.metrics, calls: parts.mediaCalls }),
          }),
        ),
        settings: parts.settings,
        maxSessions: options.maxSessions,
        hibernateAfterMs: options.sessionHibernateSeconds * 1000,
        askTimeoutMs: parts.askTimeoutMs,
        inspect: options.inspect,
        metrics: parts.metrics,
        memoryBudget: parts.memoryBudget,
        agentNotices: parts.agentNotices,
      }),
  );
  const { sessions } = options.store;
  if (sessions.keptReply) system.keptReply = (requestKey) => sessions.keptReply!(requestKey);
  return system;
}

/** The same system with sessions hosted by `makeHost` (SESSION_HOST=restate hosts them in Restate). */
export function createHostedSystem<Host extends SessionHost>(
  options: ActorSystemOptions,
  makeHost: (parts: HostParts) => Host,
): ActorSystem<Host> {
  const { activity } = options.store;
  const flowGraphs = createFlowGraphs(options.clock, activity);
  const metrics = createServiceMetrics();
  const memoryBudget = new MemoryBudget(options.memoryBudgetMb);
  const activityActor = new ActivityActor({
    log: activity,
    logger: options.logger,
    inspect: options.inspect,
    onHeldBytes: (bytes) => memoryBudget.hold('activity_actor', bytes),
  });
  activityActor.subscribe('metrics', activityCounter(metrics));
  activityActor.subscribe('flow_graphs', flowGraphs.learn);
  const mediaCalls = new MediaCallLog(options.clock);
  const supervisor = makeHost({
    baseLogic: options.sessionLogic ?? sessionMachine,
    settings: options.settings,
    metrics,
    mediaCalls,
    memoryBudget,
    agentNotices: new AgentNotices(options.media, options.clock, options.logger, { metrics, calls: mediaCalls }),
    askTimeoutMs: askTimeoutFor(options.media),
  });
  metrics.sources.sessions = () => supervisor.counts;
  const callUpkeep =
    options.store.calls && options.calls
      ? new CallUpkeep({ calls: options.store.calls, clock: options.clock, logger: options.logger, ...options.calls })
      : undefined;
  if (callUpkeep) {
    // What a commit may have queued: a call's end, a consent, a handoff (docs/reference/webhooks.md).
    activity.onRecorded((item) => {
      if (
        item.kind === 'session_stop' ||
        item.kind === 'consent' ||
        (item.kind === 'event' &&
          (item.payload.event === 'handoff_requested' || item.payload.event === HANDOFF_UNANSWERED))
      )
        callUpkeep.nudge();
    });
    callUpkeep.start();
  }
  return {
    clock: options.clock,
    activity,
    activityActor,
    sessionHost: supervisor,
    memoryBudget,
    featureFlags: options.featureFlags,
    agentContext: options.agentContext,
    metrics,
    mediaCalls,
    tokens: options.media,
    agents: options.media,
    recordFlowGraph: async (sighting) => {
      flowGraphs.record(sighting);
      return supervisor.commitOutcome();
    },
    evaluateTriggerWithoutSession: async (request) => {
      const decision = evaluateWithoutSession(
        { clock: options.clock, activity, criticalSteps: options.settings.criticalSteps },
        request,
      );
      return { decision, commit: await supervisor.commitOutcome() };
    },
    storeHealth: () => options.store.sessions.health(),
    calls: options.store.calls,
    erasure: options.store.erasure,
    callRecords:
      options.store.calls && options.store.erasure
        ? localCallRecords({
            calls: options.store.calls,
            erasure: options.store.erasure,
            host: supervisor,
            clock: options.clock,
            nudge: () => callUpkeep?.nudge(),
          })
        : undefined,
    callUpkeep,
    stop: () => {
      callUpkeep?.stop();
      supervisor.stopAll();
      activityActor.stop();
      options.store.sessions.close();
      options.store.activity.close();
    },
  };
}
