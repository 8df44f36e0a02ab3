import type { AssistantCommand, IngestResult, Reply, SessionCommand } from '../machines/session/machine-events.js';
import type { CommitOutcome } from '../store/ports.js';
import type { SessionContext } from '../machines/session/session-context.js';
import type { ReplyKeeping } from './named-request.js';
import type { SessionListQuery, SessionPage } from './session-listing.js';

/**
 * `unavailable`: the change could not be committed (disk full), or in cluster mode `unreachable`
 * names the engine that could not be reached: nothing was acknowledged. `memory`: MEMORY_BUDGET_MB is reached.
 */
export type AskFailure = {
  ok: false;
  reason: 'not_found' | 'capacity' | 'failed' | 'timeout' | 'unavailable' | 'memory';
  unreachable?: Dependency;
  /**
   * The connection failed after the command was sent: it may have been taken, so may yet be
   * applied. With `unreachable: 'redis'`: the session did not change, but the write of its activity
   * items went out without an answer, so they may appear.
   */
  maybeApplied?: true;
};
export type AskResult<T> = { ok: true; value: T } | AskFailure;

/** Whether a command may bring a session into being or needs one that exists. */
export type Routing = 'create' | 'existing';

/** An engine cluster mode depends on (SESSION_HOST=restate). */
export type Dependency = 'restate' | 'redis';

/** A read could not be answered because `dependency` is unreachable: a 503 naming it, never a 500. */
export class DependencyUnavailableError extends Error {
  override name = 'DependencyUnavailableError';
  constructor(readonly dependency: Dependency) {
    super(`${dependency} unreachable`);
  }
}

/** A read-only view of one session: its context and the state value it is (or would resume) in. */
export interface SessionView {
  context: SessionContext;
  value: unknown;
}

/**
 * Where sessions run, as the routes see it: in this process (`SessionSupervisor`, SESSION_HOST=embedded)
 * or as Restate virtual objects (`RemoteSessionHost`, SESSION_HOST=restate). A route sends a command
 * and awaits its reply; it never knows which. Reads may answer at once or later.
 */
export interface SessionHost {
  /**
   * `build` receives the reply callback and the current time and returns the command. `keeping`
   * says how a reply holding a credential is kept for a copy of a named request; a host whose
   * copies are answered elsewhere (Restate's idempotency) ignores it.
   */
  ask<T>(
    sessionId: string,
    routing: Routing,
    build: (reply: Reply<T>, at: number) => SessionCommand,
    keeping?: ReplyKeeping<T>,
  ): Promise<AskResult<T>>;
  /**
   * An SDK event (`session.ingest`), answered once the host holds it durably: in this process,
   * once applied (an ask); in cluster mode, once Restate has taken it, before it is applied, with
   * `requestId` (the id the client gave the request, if any) making a retry of it apply once.
   */
  ingest(
    sessionId: string,
    build: (reply: Reply<IngestResult>, at: number) => SessionCommand,
    requestId?: string,
  ): Promise<AskResult<IngestResult>>;
  snapshot(sessionId: string): SessionView | undefined | Promise<SessionView | undefined>;
  list(query: SessionListQuery): SessionPage | Promise<SessionPage>;
  /**
   * Whether everything this process queued so far is committed: `refused`, or `in_doubt` when a
   * write went out without an answer (docs/decisions/0047-a-write-in-doubt-is-not-a-refusal.md).
   */
  commitOutcome(): Promise<CommitOutcome>;
  /** Sessions running as actors in this process and sessions held only as state. */
  readonly counts: { running: number; hibernated: number };
  subscribe(sessionId: string, listener: (command: AssistantCommand) => void): () => void;
  stopAll(): void;
  /** Lets go of every session of `userId`, running or stored, and names them; a host that cannot (cluster mode) has none. */
  eraseUser?(userId: string): string[];
}
