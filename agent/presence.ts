import type { Timers } from './context-source.js';
import { realTimers } from './context-source.js';

export interface PresenceOptions {
  serviceUrl: string;
  apiKey: string | undefined;
  sessionId: string;
  /** This job's participant identity in the call's room. */
  identity: string;
  timers?: Timers;
  /** `fetch` as the runtime has it; a test may give another. */
  fetch?: typeof fetch;
  log(message: string, fields?: Record<string, unknown>): void;
}

/** Reconnect delays: the first at once-ish, none past the service's grace (2 s) while the job lives. */
const RETRY_MS = [100, 250, 500, 1_000];

/**
 * The connection a job holds open to the service while it is in the call's room
 * (GET /v1/assistant/presence/{session_id}; docs/reference/voice-agent.md, "Faults"). Its process dying
 * closes it at once; the service then takes this agent out of the room and sends a new one,
 * in seconds rather than the 15 to 20 s livekit-server takes to drop a dead participant. While
 * the job lives, a connection that drops (the service restarted, a proxy closed it) is opened
 * again well within the service's grace, so a live agent is never replaced for it.
 */
export class Presence {
  private readonly timers: Timers;
  private readonly fetch: typeof fetch;
  private abort: AbortController | undefined;
  private cancelRetry: (() => void) | undefined;
  private closed = false;
  private failures = 0;
  /** Connections the service answered with its `present` message (for tests and the log). */
  held = 0;

  constructor(private readonly options: PresenceOptions) {
    this.timers = options.timers ?? realTimers;
    this.fetch = options.fetch ?? fetch;
  }

  start(): void {
    void this.connect();
  }

  /** The job leaves: the connection closes, and is not opened again. */
  close(): void {
    this.closed = true;
    this.cancelRetry?.();
    this.abort?.abort();
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const { serviceUrl, apiKey, sessionId, identity } = this.options;
    const abort = new AbortController();
    this.abort = abort;
    const url = `${serviceUrl.replace(/\/+$/, '')}/v1/assistant/presence/${encodeURIComponent(sessionId)}?identity=${encodeURIComponent(identity)}`;
    try {
      const response = await this.fetch(url, { headers: apiKey ? { 'x-api-key': apiKey } : {}, signal: abort.signal });
      if (!response.ok || !response.body) {
        // A session the service no longer has (404), or a refusal: nothing to hold; retried all the same,
        // as the service may be a restarted one still loading its sessions.
        this.options.log('presence connection refused', { status: response.status });
        await response.body?.cancel();
      } else {
        this.held += 1;
        this.failures = 0;
        // Read to the end: the body ends only when the connection does.
        const reader = response.body.getReader();
        while (!(await reader.read()).done);
      }
    } catch (error) {
      if (this.closed) return;
      this.options.log('presence connection lost', { cause: error instanceof Error ? error.message : String(error) });
    }
    this.retry();
  }

  private retry(): void {
    if (this.closed) return;
    const delay = RETRY_MS[Math.min(this.failures, RETRY_MS.length - 1)]!;
    this.failures += 1;
    this.cancelRetry = this.timers.after(delay, () => void this.connect());
  }
}
