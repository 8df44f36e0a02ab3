import type { Logger } from 'pino';
import { stringify } from 'safe-stable-stringify';
import { digestOf } from '../domain/digest.js';
import type { ClusterHealth } from '../actor-system/cluster-health.js';
import { CommandListeners } from '../actor-system/command-listeners.js';
import type { ReplyKeeping } from '../actor-system/named-request.js';
import type { SessionHost, SessionView } from '../actor-system/session-host.js';
import type { Dependency } from '../actor-system/session-host.js';
import { DependencyUnavailableError } from '../actor-system/session-host.js';
import type { SessionListQuery, SessionPage } from '../actor-system/session-listing.js';
import { pageOfSessions } from '../actor-system/session-listing.js';
import { storedView } from '../actor-system/stored-session.js';
import type { AskResult, Routing } from '../actor-system/session-host.js';
import { selectSummaries } from '../store/summary-selection.js';
import type { AppClock } from '../integrations/clock.js';
import type { AssistantCommand, IngestResult, Reply, SessionCommand } from '../machines/session/machine-events.js';
import type { SessionSettings } from '../machines/session/session-context.js';
import type { ActivityLog, StoredSession } from '../store/ports.js';
import type { CommitOutcome } from '../store/ports.js';
import { MAY_HAVE_BEEN_APPLIED, StoreInDoubtError } from '../store/ports.js';
import type { CommandFanout } from './command-fanout.js';
import { toWireCommand } from './command-wire.js';
import { currentIdempotencyKey } from './idempotency.js';
import type { AskResponse, IngestCommand, KeptSummary } from './session-object.js';
import type { BatchLimits, BatchedEvent } from './event-batches.js';
import { SessionBatches } from './event-batches.js';
import { ACTIVITY_LOG_UNREACHABLE, SESSION_OBJECT, STATE, acceptedAnswer } from './session-object.js';
import type { RestateHttp } from './restate-http.js';
import { AdminQueryError, stateRows } from './state-query.js';
import { RestateTimeoutError, RestateUnreachableError } from './restate-http.js';

export interface RemoteHostOptions {
  /** RESTATE_INGRESS_URL: where commands go (private: every handler is callable there). */
  ingress: RestateHttp;
  /** RESTATE_ADMIN_URL: its SQL over object state lists sessions. */
  admin: RestateHttp;
  clock: AppClock;
  logger: Logger;
  activity: ActivityLog;
  settings: SessionSettings;
  askTimeoutMs: number;
  /** Commands sessions push, from whichever process ran the invocation, for this process's control sockets. */
  commands: Pick<CommandFanout, 'onCommand'>;
  /** How large one session's batch of events may grow (DEFAULT_BATCH_LIMITS unless a test sets others). */
  batchLimits?: BatchLimits | undefined;
}

/** An SDK event on its way, with its JSON made once (its size is counted against the batch's). */
interface SentEvent {
  command: IngestCommand;
  json: string;
}

/** A request body already JSON text. */
class PreSerialised {
  constructor(readonly text: string) {}
}

const REDIS_REFUSAL: AskResult<never> = { ok: false, reason: 'unavailable', unreachable: 'redis' };

/** How long /health, or a read that timed out, waits for Redis to answer a PING. */
const REDIS_PROBE_MS = 1_000;
/** How long a reply waits for this process to read back the activity its command wrote, past which it answers anyway. */
const READ_BACK_MS = 2_000;
/**
 * How long a session read waits for its turn while this process's connection to Redis is down: the
 * turn may be held by acknowledged events that wait for Redis (docs/explanation/cluster.md, Outages).
 */
const READ_WHILE_REDIS_DOWN_MS = 2_000;

/** The ingress answered with an error: `refusedBy` is set when the handler refused because Redis is unreachable. */
class IngressError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly invocationId: string | null,
    readonly refusedBy?: 'redis',
    /** The handler's write to Redis went out without an answer: its activity items may appear. */
    readonly inDoubt = false,
  ) {
    super(message);
  }
}

/** No answer from Restate at all (refused connection, reset): it is down or unreachable from here. */
const unreachable = (error: unknown): error is RestateUnreachableError => error instanceof RestateUnreachableError;
const timedOut = (error: unknown): boolean => error instanceof RestateTimeoutError;
const ok = (status: number): boolean => status >= 200 && status < 300;

/**
 * SESSION_HOST=restate, as the routes see it: every command goes through the Restate ingress to the
 * session's virtual object, wherever it runs; nothing about a session is kept in this process, so
 * any number of processes serve behind any load balancer. A reply is given once this process has
 * read back the activity the command wrote, so a response sees its own write.
 */
export class RemoteSessionHost implements SessionHost {
  private readonly listeners: CommandListeners;
  private readonly batches: SessionBatches<SentEvent, AskResult<IngestResult>>;
  /** No session runs as an actor here between commands: each lives in Restate as its state. */
  readonly counts = { running: 0, hibernated: 0 };

  constructor(private readonly options: RemoteHostOptions) {
    this.listeners = new CommandListeners(options.logger);
    this.batches = new SessionBatches((sessionId, batch) => this.sendEvents(sessionId, batch), options.batchLimits);
    options.commands.onCommand((sessionId, command) => this.listeners.publish(sessionId, command));
  }

  /**
   * `keeping`: the session object answers a reply that would hold a credential without it (its
   * journal and the answer Restate keeps for the idempotency key are at rest), and this process
   * completes it, as a copy of a named request is (docs/decisions/0033-no-credential-kept-with-a-reply.md).
   */
  async ask<T>(
    sessionId: string,
    routing: Routing,
    build: (reply: Reply<T>, at: number) => SessionCommand,
    keeping?: ReplyKeeping<T>,
  ): Promise<AskResult<T>> {
    // Refused unsent while this process's connection to Redis is down, as an event is: sent, the call
    // could wait its turn behind acknowledged events that wait for Redis, and run after its caller was told 503.
    if (!this.redisAccepting()) return REDIS_REFUSAL;
    // The handler gives the command Restate's time and a reply of its own.
    const command = toWireCommand(build(() => undefined, this.options.clock.now()));
    const idempotencyKey = currentIdempotencyKey();
    let response: AskResponse;
    try {
      response = await this.call<AskResponse>(
        `${SESSION_OBJECT}/${encodeURIComponent(sessionId)}/ask`,
        { routing, command },
        idempotencyKey,
      );
    } catch (error) {
      if (error instanceof IngressError && error.refusedBy === 'redis' && idempotencyKey !== undefined)
        await this.forgetRefusal(error.invocationId);
      return this.failure(error, sessionId);
    }
    if (!response.ok) return response;
    await this.readBack(response.seen_through, sessionId);
    if (!keeping) return { ok: true, value: response.value as T };
    try {
      return { ok: true, value: await keeping.answer(keeping.kept(response.value as T)) };
    } catch (error) {
      this.options.logger.error({ err: error, session_id: sessionId }, 'an applied command could not be answered');
      return { ok: false, reason: 'failed' };
    }
  }

  /**
   * An SDK event is sent one-way: answered once Restate has durably taken it, not once the session
   * ran it (its answer needs nothing the session decides). Restate runs a key's exclusive
   * invocations one at a time in the order it took them, so the session's later calls and reads
   * (`view`) see it. Events for the same session leave this process in batches (event-batches.ts).
   * The idempotency key is the client's request: a retry of the same request, on any process, is
   * taken once and answered as the first was.
   */
  async ingest(
    sessionId: string,
    build: (reply: Reply<IngestResult>, at: number) => SessionCommand,
    requestId?: string,
  ): Promise<AskResult<IngestResult>> {
    const command = toWireCommand(build(() => undefined, this.options.clock.now())) as IngestCommand;
    // Once taken, the event is kept whatever happens to Redis: so it is refused, never sent, while
    // this process's own connection to Redis is down (the invocation would wait for it unseen).
    if (!this.redisAccepting()) return REDIS_REFUSAL;
    const json = JSON.stringify(command);
    // The same id on another event is another request: only a copy of this one is a retry of it.
    // Without the client's id no retry could be recognised, so none is sent: a key costs Restate an
    // idempotency entry and the output kept for the whole retention (docs/explanation/cluster.md, "Journal work per invocation").
    const key =
      requestId === undefined
        ? undefined
        : digestOf(typeof command.channel === 'string' ? command.channel : 'http', requestId, stringify(command.event));
    return this.batches.submit(sessionId, { event: { command, json }, bytes: json.length, key });
  }

  /** One batch of a session's events, as one one-way invocation of its `ingest` handler: each event answered. */
  private async sendEvents(
    sessionId: string,
    batch: readonly BatchedEvent<SentEvent>[],
  ): Promise<AskResult<IngestResult>[]> {
    // Checked again: the batch may have waited for the send before it while Redis went away.
    if (!this.redisAccepting()) return batch.map(() => REDIS_REFUSAL);
    const path = `${SESSION_OBJECT}/${encodeURIComponent(sessionId)}/ingest`;
    const body = `{"commands":[${batch.map(({ event }) => event.json).join(',')}]}`;
    try {
      const sent = await this.call<{ invocationId: string; status: 'Accepted' | 'PreviouslyAccepted' }>(
        `${path}/send`,
        new PreSerialised(body),
        batch.length === 1 ? batch[0]!.key : undefined,
      );
      if (sent.status !== 'PreviouslyAccepted')
        return batch.map(({ event }) => ({ ok: true, value: acceptedAnswer(event.command) }));
      // A retry, always sent alone: the first copy's answer, once it has run (its output is that answer).
      const output = await this.call<IngestResult | IngestResult[]>(
        `restate/invocation/${encodeURIComponent(sent.invocationId)}/attach`,
        undefined,
        undefined,
        'GET',
      );
      return [{ ok: true, value: Array.isArray(output) ? output[0]! : output }];
    } catch (error) {
      const failure = this.failure(error, sessionId);
      return batch.map(() => failure);
    }
  }

  async snapshot(sessionId: string): Promise<SessionView | undefined> {
    const path = `${SESSION_OBJECT}/${encodeURIComponent(sessionId)}/view`;
    // `view` waits its turn behind the session's queue, which events waiting for Redis may hold: a
    // bounded wait then, and an answer naming what it waited for.
    const stored = this.redisAccepting()
      ? await this.reading(() => this.call<StoredSession | null>(path, undefined))
      : await this.reading(
          () => this.call<StoredSession | null>(path, undefined, undefined, 'POST', READ_WHILE_REDIS_DOWN_MS),
          'redis',
        );
    return stored ? storedView(stored, this.options.settings, this.options.clock.now()) : undefined;
  }

  /** Restate's admin SQL over the summaries every session keeps beside its context: one scan per page. */
  async list(query: SessionListQuery): Promise<SessionPage> {
    const kept = await this.reading(() => this.summaries());
    const flows = new Map(kept.map((summary) => [summary.row.session_id, summary.flow]));
    return pageOfSessions(
      {
        select: (selection) =>
          selectSummaries(
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

  async commitOutcome(): Promise<CommitOutcome> {
    try {
      await this.options.activity.commit();
      return 'kept';
    } catch (error) {
      this.options.logger.error({ err: error }, 'activity commit failed; request refused');
      return error instanceof StoreInDoubtError ? 'in_doubt' : 'refused';
    }
  }

  subscribe(sessionId: string, listener: (command: AssistantCommand) => void): () => void {
    return this.listeners.subscribe(sessionId, listener);
  }

  stopAll(): void {}

  /** Whether the ingress and admin API answer and the activity log takes writes (/health). */
  async health(): Promise<ClusterHealth> {
    const answers = async (restate: RestateHttp, path: string) => {
      try {
        await restate.request(path, { method: 'GET', timeoutMs: 2000 });
        return 'ok' as const;
      } catch {
        return 'unreachable' as const;
      }
    };
    // Redis asked too, not only its connection's state: a stopped Redis keeps its connections open.
    const [ingress, admin, redisAnswers] = await Promise.all([
      answers(this.options.ingress, './'),
      answers(this.options.admin, 'health'),
      this.options.activity.answers?.(REDIS_PROBE_MS),
    ]);
    return {
      restate: { ingress, admin },
      redis: this.options.activity.health().status,
      redis_answers: redisAnswers !== false && this.redisAccepting(),
    };
  }

  private async summaries(): Promise<KeptSummary[]> {
    try {
      return (
        await stateRows<KeptSummary>(this.options.admin, SESSION_OBJECT, STATE.summary, this.options.askTimeoutMs)
      ).map((row) => row.value);
    } catch (error) {
      if (error instanceof AdminQueryError) throw new IngressError(500, error.message, null);
      throw error;
    }
  }

  /** Whether this process's own connection to Redis takes writes (docs/explanation/cluster.md, Outages). */
  private redisAccepting(): boolean {
    return this.options.activity.accepting?.() !== false;
  }

  /** `body` is sent as JSON, or as it is when already JSON text (`{ text }`). */
  private async call<T>(
    path: string,
    body: unknown,
    idempotencyKey?: string,
    method: 'GET' | 'POST' = 'POST',
    timeoutMs = this.options.askTimeoutMs,
  ): Promise<T> {
    const headers: Record<string, string> = idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey };
    const text = body instanceof PreSerialised ? body.text : body === undefined ? undefined : JSON.stringify(body);
    const response = await this.options.ingress.request(path, {
      method,
      headers,
      timeoutMs,
      ...(text === undefined ? {} : { body: text }),
    });
    if (!ok(response.status)) {
      const refusedBy = response.status === ACTIVITY_LOG_UNREACHABLE ? 'redis' : undefined;
      throw new IngressError(
        response.status,
        `${path}: ${response.status} ${response.text}`,
        response.invocationId,
        refusedBy,
        refusedBy !== undefined && response.text.includes(MAY_HAVE_BEEN_APPLIED),
      );
    }
    return JSON.parse(response.text) as T;
  }

  private failure(error: unknown, sessionId: string): AskResult<never> {
    if (timedOut(error)) return { ok: false, reason: 'timeout' };
    if (error instanceof IngressError && error.refusedBy) {
      this.options.logger.warn({ session_id: sessionId, err: error }, 'session command refused: Redis unreachable');
      return {
        ok: false,
        reason: 'unavailable',
        unreachable: error.refusedBy,
        ...(error.inDoubt ? { maybeApplied: true as const } : {}),
      };
    }
    this.options.logger.error({ err: error, session_id: sessionId }, 'session command failed in Restate');
    // Unreachable ingress: nothing was acknowledged, the client retries. A failed handler: a 500.
    if (unreachable(error))
      return {
        ok: false,
        reason: 'unavailable',
        unreachable: 'restate',
        ...(error.maybeTaken ? { maybeApplied: true as const } : {}),
      };
    return { ok: false, reason: error instanceof IngressError ? 'failed' : 'unavailable' };
  }

  /**
   * A read Restate cannot answer because it is unreachable is a 503 naming it, not a 500; one not
   * answered in time names `late`, what it was waiting for.
   */
  private async reading<T>(read: () => Promise<T>, late: Dependency = 'restate'): Promise<T> {
    try {
      return await read();
    } catch (error) {
      if (unreachable(error)) throw new DependencyUnavailableError('restate');
      // A read changes nothing: one not answered in time is as good as unreachable. What it waited
      // for is named: a Redis that stopped answering holds the session's turn as surely as Restate.
      if (timedOut(error))
        throw new DependencyUnavailableError(
          late === 'restate' && (await this.options.activity.answers?.(REDIS_PROBE_MS)) === false ? 'redis' : late,
        );
      throw error;
    }
  }

  /**
   * Restate keeps a refused invocation's answer under its idempotency key: forgotten, the client's
   * retry with the same key runs the command anew once Redis is back instead of getting the refusal again.
   */
  private async forgetRefusal(invocationId: string | null): Promise<void> {
    if (invocationId === null) return;
    try {
      const response = await this.options.admin.request(`invocations/${encodeURIComponent(invocationId)}/purge`, {
        method: 'PATCH',
        timeoutMs: 2000,
      });
      if (!ok(response.status)) throw new Error(`purge answered ${response.status}`);
    } catch (error) {
      this.options.logger.warn(
        { err: error, invocation_id: invocationId },
        'refused invocation not purged: a retry with its Idempotency-Key gets the refusal again until it expires',
      );
    }
  }

  /**
   * Waits to have read back what the command wrote, so the reply sees its own write. The command is
   * applied and acknowledged by Restate already: if this process cannot read Redis in time, the
   * answer is still the command's (a 503 would be a lie), and the activity list here lags behind.
   */
  private async readBack(seenThrough: number, sessionId: string): Promise<void> {
    const caughtUp = this.options.activity.caughtUp?.(seenThrough);
    if (!caughtUp) return;
    const { clock } = this.options;
    let timer: unknown;
    const late = new Promise<'late'>((resolve) => (timer = clock.setTimeout(() => resolve('late'), READ_BACK_MS)));
    const outcome = await Promise.race([caughtUp, late]);
    clock.clearTimeout(timer);
    if (outcome === 'late')
      this.options.logger.warn(
        { session_id: sessionId, seen_through: seenThrough },
        'applied command answered before its activity was read back (Redis slow or unreachable)',
      );
  }
}
