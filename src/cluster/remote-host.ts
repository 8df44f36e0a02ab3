import type { Logger } from 'pino';
import type { ClusterHealth } from '../actors/cluster-health.js';
import { CommandListeners } from '../actors/command-listeners.js';
import type { SessionHost, SessionView } from '../actors/session-host.js';
import type { SessionListQuery, SessionPage } from '../actors/session-listing.js';
import { pageOfSessions } from '../actors/session-listing.js';
import { storedView } from '../actors/stored-session.js';
import type { AskResult, Routing } from '../actors/session-host.js';
import { selectSummaries } from '../store/summary-selection.js';
import type { AppClock } from '../integrations/clock.js';
import type { AssistantCommand, Reply, SessionCommand } from '../machines/session.events.js';
import type { SessionSettings } from '../machines/session.machine.js';
import type { ActivityLog, StoredSession } from '../store/ports.js';
import type { CommandFanout } from './command-fanout.js';
import { toWireCommand } from './command-wire.js';
import { currentIdempotencyKey } from './idempotency.js';
import type { AskResponse, KeptSummary } from './session-object.js';
import { SESSION_OBJECT, STATE } from './session-object.js';

export interface RemoteHostOptions {
  /** RESTATE_INGRESS_URL: where commands go (private: every handler is callable there). */
  ingressUrl: string;
  /** RESTATE_ADMIN_URL: its SQL over object state lists sessions. */
  adminUrl: string;
  clock: AppClock;
  logger: Logger;
  activity: ActivityLog;
  settings: SessionSettings;
  askTimeoutMs: number;
  /** Commands sessions push, from whichever process ran the invocation, for this process's control sockets. */
  commands: Pick<CommandFanout, 'onCommand'>;
}

class IngressError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * SESSION_HOST=restate, as the routes see it: every command goes through the Restate ingress to the
 * session's virtual object, wherever it runs; nothing about a session is kept in this process, so
 * any number of processes serve behind any load balancer. A reply is given once this process has
 * read back the activity the command wrote, so a response sees its own write.
 */
export class RemoteSessionHost implements SessionHost {
  private readonly listeners: CommandListeners;
  /** No session runs as an actor here between commands: each lives in Restate as its state. */
  readonly counts = { running: 0, hibernated: 0 };

  constructor(private readonly options: RemoteHostOptions) {
    this.listeners = new CommandListeners(options.logger);
    options.commands.onCommand((sessionId, command) => this.listeners.publish(sessionId, command));
  }

  async ask<T>(sessionId: string, routing: Routing, build: (reply: Reply<T>, at: number) => SessionCommand): Promise<AskResult<T>> {
    // The handler gives the command Restate's time and a reply of its own.
    const command = toWireCommand(build(() => undefined, this.options.clock.now()));
    let response: AskResponse;
    try {
      response = await this.call<AskResponse>(`${SESSION_OBJECT}/${encodeURIComponent(sessionId)}/ask`, { routing, command }, currentIdempotencyKey());
    } catch (error) {
      return this.failure(error, sessionId);
    }
    if (!response.ok) return response;
    await this.options.activity.caughtUp?.(response.seen_through);
    return { ok: true, value: response.value as T };
  }

  async snapshot(sessionId: string): Promise<SessionView | undefined> {
    const stored = await this.call<StoredSession | null>(`${SESSION_OBJECT}/${encodeURIComponent(sessionId)}/view`, undefined);
    return stored ? storedView(stored, this.options.settings, this.options.clock.now()) : undefined;
  }

  /** Restate's admin SQL over the summaries every session keeps beside its context: one scan per page. */
  async list(query: SessionListQuery): Promise<SessionPage> {
    const kept = await this.summaries();
    const flows = new Map(kept.map((summary) => [summary.row.session_id, summary.flow]));
    return pageOfSessions(
      {
        select: (selection) => selectSummaries(
          kept.map((summary) => summary.row),
          selection,
        ),
        isRunning: () => false,
        flowOf: (sessionId) => flows.get(sessionId) ?? null,
      },
      query,
      this.options.clock.now(),
    );
  }

  async committed(): Promise<boolean> {
    try {
      await this.options.activity.commit();
      return true;
    } catch (error) {
      this.options.logger.error({ err: error }, 'activity commit failed; request refused');
      return false;
    }
  }

  subscribe(sessionId: string, listener: (command: AssistantCommand) => void): () => void {
    return this.listeners.subscribe(sessionId, listener);
  }

  stopAll(): void {}

  /** Whether the ingress and admin API answer and the activity log takes writes (/health). */
  async health(): Promise<ClusterHealth> {
    const answers = async (url: string) => {
      try {
        await fetch(url, { signal: AbortSignal.timeout(2000) });
        return 'ok' as const;
      } catch {
        return 'unreachable' as const;
      }
    };
    const [ingress, admin] = await Promise.all([answers(this.options.ingressUrl), answers(new URL('health', this.options.adminUrl).href)]);
    return { restate: { ingress, admin }, redis: this.options.activity.health().status };
  }

  private async summaries(): Promise<KeptSummary[]> {
    const response = await fetch(new URL('query', this.options.adminUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        query: `SELECT value_utf8 FROM state WHERE service_name = '${SESSION_OBJECT}' AND key = '${STATE.summary}'`,
      }),
      signal: AbortSignal.timeout(this.options.askTimeoutMs),
    });
    if (!response.ok) throw new IngressError(response.status, `admin query answered ${response.status}`);
    const { rows } = (await response.json()) as { rows: { value_utf8: string }[] };
    return rows.map((row) => JSON.parse(row.value_utf8) as KeptSummary);
  }

  private async call<T>(path: string, body: unknown, idempotencyKey?: string): Promise<T> {
    const headers: Record<string, string> = idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey };
    const response = await fetch(new URL(path, this.options.ingressUrl), {
      method: 'POST',
      ...(body === undefined ? { headers } : { headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(this.options.askTimeoutMs),
    });
    if (!response.ok) throw new IngressError(response.status, `${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  }

  private failure(error: unknown, sessionId: string): AskResult<never> {
    if (error instanceof DOMException && error.name === 'TimeoutError') return { ok: false, reason: 'timeout' };
    this.options.logger.error({ err: error, session_id: sessionId }, 'session command failed in Restate');
    // Unreachable ingress: nothing was acknowledged, the client retries. A failed handler: a 500.
    return { ok: false, reason: error instanceof IngressError ? 'failed' : 'unavailable' };
  }
}
