import type { Schemas, ServiceClient } from '../src/client/index.js';
import type { RefreshPolicy } from '../src/domain/refresh-policy.js';
import { servedRefreshPolicy } from '../src/domain/refresh-policy.js';

export type AgentContext = Schemas['AgentContext'];

/** Why a fetch ran: logged, and useful to tests; never anything the user said. */
export type RefreshReason = 'start' | 'periodic' | 'user_turn' | 'context_updated' | 'retry';

export interface Timers {
  now(): number;
  /** Runs `run` after `ms`; the returned function cancels it. */
  after(ms: number, run: () => void): () => void;
}

export const realTimers: Timers = {
  now: () => Date.now(),
  after(ms, run) {
    const timer = setTimeout(run, ms);
    timer.unref?.();
    return () => clearTimeout(timer);
  },
};

export interface ContextSourceOptions {
  client: ServiceClient;
  sessionId: string;
  /**
   * The dispatch this job came by, sent with each fetch: the service takes a fetch as the call's
   * agent joining only from its current dispatch (docs/decisions/0032-an-agent-joins-or-the-call-ends.md).
   */
  dispatchId?: string;
  /** Used until the service serves one with the context. */
  fallbackPolicy: RefreshPolicy;
  timeoutMs: number;
  retryMaxMs: number;
  timers?: Timers;
  /** The prompt changed: the agent's instructions should follow. */
  onPrompt(prompt: string): void;
  /** The service could not be reached (after a first failed try); called again only after it recovered. */
  onUnreachable(cause: string): void;
  onRecovered(): void;
  log(message: string, fields?: Record<string, unknown>): void;
}

/** A failure worth trying again (the service down, slow or overloaded), or one that will not change (the session is unknown). */
class FetchFailure extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

/**
 * The session's context as the agent knows it, kept fresh by the refresh policy (docs/reference/voice-agent.md):
 * periodically, on each user turn if the policy says so, and on each `context_updated` notice,
 * never two fetches closer than the minimum interval (a refresh asked for sooner runs when the
 * interval is over). When the service cannot be reached the last context stays in use and the
 * fetch is retried with exponential backoff.
 */
export class ContextSource {
  private context: AgentContext | undefined;
  private policy: RefreshPolicy;
  private lastFetchAt = Number.NEGATIVE_INFINITY;
  private inFlight: Promise<void> | undefined;
  private cancelPeriodic: (() => void) | undefined;
  private cancelDeferred: (() => void) | undefined;
  private cancelRetry: (() => void) | undefined;
  private failures = 0;
  private unreachable = false;
  private closed = false;
  private readonly timers: Timers;

  constructor(private readonly options: ContextSourceOptions) {
    this.policy = options.fallbackPolicy;
    this.timers = options.timers ?? realTimers;
  }

  get current(): AgentContext | undefined {
    return this.context;
  }

  get refreshPolicy(): RefreshPolicy {
    return this.policy;
  }

  get reachable(): boolean {
    return !this.unreachable;
  }

  /** The first fetch; resolves whether or not it succeeded (failures are retried in the background). */
  start(): Promise<void> {
    return this.fetchNow('start');
  }

  /** A user turn ended: refresh first if the policy asks for it and the interval allows; resolves when the context is as fresh as it may be. */
  async beforeReply(): Promise<void> {
    if (this.policy.on_user_turn && this.due()) await this.fetchNow('user_turn');
    else if (this.inFlight) await this.inFlight;
  }

  /** The service said the context changed: fetch now, or as soon as the minimum interval allows. */
  onNotice(): void {
    if (this.due()) {
      void this.fetchNow('context_updated');
      return;
    }
    if (this.cancelDeferred) return;
    const wait = this.lastFetchAt + this.policy.min_interval_seconds * 1000 - this.timers.now();
    this.cancelDeferred = this.timers.after(Math.max(0, wait), () => {
      this.cancelDeferred = undefined;
      void this.fetchNow('context_updated');
    });
  }

  close(): void {
    this.closed = true;
    for (const cancel of [this.cancelPeriodic, this.cancelDeferred, this.cancelRetry]) cancel?.();
  }

  private due(): boolean {
    return this.timers.now() - this.lastFetchAt >= this.policy.min_interval_seconds * 1000;
  }

  private fetchNow(reason: RefreshReason): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.inFlight ??= this.fetchOnce(reason).finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  private async fetchOnce(reason: RefreshReason): Promise<void> {
    this.lastFetchAt = this.timers.now();
    this.cancelDeferred?.();
    this.cancelDeferred = undefined;
    try {
      const context = await this.request();
      this.failures = 0;
      this.cancelRetry?.();
      this.cancelRetry = undefined;
      if (this.unreachable) {
        this.unreachable = false;
        this.options.onRecovered();
      }
      const changed = context.system_prompt !== this.context?.system_prompt;
      this.context = context;
      this.policy = servedRefreshPolicy(context) ?? this.policy;
      this.options.log('context fetched', { reason, prompt_changed: changed });
      if (changed) this.options.onPrompt(context.system_prompt);
    } catch (error) {
      const failure = error instanceof FetchFailure ? error : new FetchFailure(String(error), true);
      this.failures += 1;
      this.options.log('context fetch failed', {
        reason,
        cause: failure.message,
        attempt: this.failures,
        retryable: failure.retryable,
      });
      if (!this.unreachable) {
        this.unreachable = true;
        this.options.onUnreachable(failure.message);
      }
      if (failure.retryable) this.scheduleRetry();
    } finally {
      this.schedulePeriodic();
    }
  }

  private scheduleRetry(): void {
    if (this.closed || this.cancelRetry) return;
    const delay = Math.min(this.options.retryMaxMs, 500 * 2 ** Math.min(this.failures - 1, 16));
    this.cancelRetry = this.timers.after(delay, () => {
      this.cancelRetry = undefined;
      void this.fetchNow('retry');
    });
  }

  private schedulePeriodic(): void {
    this.cancelPeriodic?.();
    if (this.closed) return;
    this.cancelPeriodic = this.timers.after(this.policy.interval_seconds * 1000, () => void this.fetchNow('periodic'));
  }

  private async request(): Promise<AgentContext> {
    let result;
    try {
      result = await this.options.client.GET('/v1/assistant/context/{session_id}', {
        params: {
          path: { session_id: this.options.sessionId },
          ...(this.options.dispatchId ? { query: { dispatch_id: this.options.dispatchId } } : {}),
        },
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
    } catch (error) {
      throw new FetchFailure(error instanceof Error ? `${error.name}: ${error.message}` : String(error), true);
    }
    const { data, response } = result;
    if (data) return data;
    // 404: the session is unknown (expired, or the service lost it); asking again will not bring it back.
    throw new FetchFailure(`context answered ${response.status}`, response.status === 429 || response.status >= 500);
  }
}
