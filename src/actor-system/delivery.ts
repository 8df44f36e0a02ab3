/**
 * Delivery of commands to session actors: an ask queues its command for this event-loop turn's
 * batch (command-batch.ts), the batch runs each in its session in the order asked, and the answer
 * waits for the commit of what the command changed. What a session tells the world (a command to
 * the app, a notice to the agent) waits for the same commit. Which session a command reaches, and
 * whether one may be made for it, is the supervisor's to say (`admit`).
 */
import type { Actor } from 'xstate';
import type { Logger } from 'pino';
import type { Reply, SessionCommand } from '../machines/session/machine-events.js';
import type { SessionMachine } from '../machines/session/machine.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import { observeStep, stepStarted } from '../metrics/service-metrics.js';
import type { CommitOutcome, Durable, SessionStore } from '../store/ports.js';
import { StoreInDoubtError } from '../store/ports.js';
import { CommandBatch } from './command-batch.js';
import type { NamedRequest, ReplyKeeping } from './named-request.js';
import { MAX_KEPT_REPLY_BYTES, currentNamedRequest, isRefusal } from './named-request.js';
import type { PendingReplies } from './pending-replies.js';
import type { AskFailure, AskResult, Routing } from './session-host.js';

export type SessionActor = Actor<SessionMachine>;

/** An answer the store could not keep: the client is told to retry. */
export const UNAVAILABLE: AskFailure = { ok: false, reason: 'unavailable' };

export interface DeliveryOptions {
  clock: { now(): number };
  logger: Logger;
  store: Durable & Pick<SessionStore, 'keepReply' | 'keptReply'>;
  activity: Durable;
  /** Times each command's synchronous step; absent, nothing is timed. */
  metrics?: ServiceMetrics | undefined;
  pending: PendingReplies<SessionActor>;
  /** The session a command at `at` goes to (running, woken from the store, or made), or why there is none. */
  admit(sessionId: string, routing: Routing, at: number): SessionActor | AskFailure['reason'];
}

/** A named request, with how its reply is kept when it holds a credential. */
type KeptRequest<T> = NamedRequest & { keeping?: ReplyKeeping<T> | undefined };

export class CommandDelivery {
  private readonly batch: CommandBatch;

  constructor(private readonly options: DeliveryOptions) {
    this.batch = new CommandBatch((error) => options.logger.error({ err: error }, 'command delivery failed'));
  }

  /**
   * Send a command and wait for the machine's reply, then for what it changed to be committed.
   * `build` receives the reply callback and the current time and returns the command; the
   * machine calls the callback once its state holds the change. The command reaches its session
   * with the others of this event-loop turn (command-batch.ts), in the order they were asked.
   */
  ask<T>(
    sessionId: string,
    routing: Routing,
    build: (reply: Reply<T>, at: number) => SessionCommand,
    keeping?: ReplyKeeping<T>,
  ): Promise<AskResult<T>> {
    // Read now: the batch delivers it from another async context.
    const named = this.options.store.keepReply ? currentNamedRequest() : undefined;
    const sent = this.send(sessionId, routing, build, named && { ...named, keeping });
    // In memory a write is kept when made: the reply is the answer, with no promise waited on
    // (each one allocates per event: docs/decisions/0014-nothing-outlives-the-young-generation.md).
    if (this.options.store.committedOnWrite && this.options.activity.committedOnWrite) return sent;
    return this.afterCommit(sent);
  }

  private afterCommit<T>(sent: Promise<AskResult<T>>): Promise<AskResult<T>> {
    // Chained, not awaited: an ask waits on its group's one commit promise with two small
    // promises, where two async functions and a Promise.all allocated more (docs/decisions/0012-where-a-durable-request-goes.md).
    return sent.then((result) => (result.ok ? this.committed().then((ok) => (ok ? result : UNAVAILABLE)) : result));
  }

  /** Whether everything queued so far, session saves and activity alike, is committed. */
  committed(): Promise<boolean> {
    return this.commitBoth().then(
      () => true,
      (error: unknown) => {
        this.options.logger.error({ err: error }, 'store commit failed; request refused');
        return false;
      },
    );
  }

  private commitBoth(): Promise<unknown> {
    const { store, activity } = this.options;
    // One store keeping both (STORE=sqlite) commits both in one group: one wait, not two.
    return store === activity ? store.commit() : Promise.all([store.commit(), activity.commit()]);
  }

  /**
   * As `committed`, for what this process writes itself (a flow's graph, a trigger without a
   * session): in cluster mode a commit whose write went out without an answer is in doubt, not
   * refused (docs/decisions/0047-a-write-in-doubt-is-not-a-refusal.md).
   */
  commitOutcome(): Promise<CommitOutcome> {
    return this.commitBoth().then(
      () => 'kept' as const,
      (error: unknown) => {
        this.options.logger.error({ err: error }, 'store commit failed; request refused');
        return error instanceof StoreInDoubtError ? 'in_doubt' : 'refused';
      },
    );
  }

  /**
   * What a session tells the world (a command to the app, a notice to the agent) goes out once the
   * change behind it is committed, as activity items reach the stream: an app told to offer voice
   * by a decision a crash then lost would be offered it again within the cooldown it was shown.
   * Refused (the store failing), it is not sent at all.
   */
  whenKept(send: () => void): void {
    const { store, activity } = this.options;
    if (store.committedOnWrite && activity.committedOnWrite) return send();
    void this.committed().then((kept) => {
      if (kept) send();
    });
  }

  private keepReply<T>(named: KeptRequest<T>, value: T): void {
    if (isRefusal(value)) return;
    // What must not be at rest (a token) is left out here and made anew for a copy.
    const reply = JSON.stringify((named.keeping ? named.keeping.kept(value) : value) ?? null);
    if (reply.length <= MAX_KEPT_REPLY_BYTES)
      this.options.store.keepReply!(named.key, { fingerprint: named.fingerprint, reply });
  }

  /** Delivers now what was asked so far (shutdown): as it would have been this turn. */
  drain(): void {
    this.batch.drain();
  }

  /** Queues the command for this turn's batch (command-batch.ts); the session is found or made when it is delivered. */
  private send<T>(
    sessionId: string,
    routing: Routing,
    build: (reply: Reply<T>, at: number) => SessionCommand,
    named: KeptRequest<T> | undefined,
  ): Promise<AskResult<T>> {
    return new Promise<AskResult<T>>((resolve) => {
      this.batch.add(() => {
        try {
          this.deliver(sessionId, routing, build, resolve, named);
        } catch (error) {
          this.options.logger.error({ err: error, session_id: sessionId }, 'command could not be delivered');
          resolve({ ok: false, reason: 'failed' });
        }
      });
    });
  }

  /**
   * Runs the command in its session now; `resolve` gets the reply, or why there is none. A copy of
   * a named request whose reply the store keeps (it was applied before a restart) gets that reply
   * and changes nothing; a named request's reply is kept with its change, in the same commit.
   */
  private deliver<T>(
    sessionId: string,
    routing: Routing,
    build: (reply: Reply<T>, at: number) => SessionCommand,
    resolve: (result: AskResult<T>) => void,
    named: KeptRequest<T> | undefined,
  ): void {
    const { store } = this.options;
    const kept = named && store.keptReply?.(named.key);
    if (kept && kept.fingerprint === named.fingerprint) {
      if (!named.keeping) return resolve({ ok: true, value: JSON.parse(kept.reply) as T });
      return void named.keeping.answer(JSON.parse(kept.reply)).then(
        (value) => resolve({ ok: true, value }),
        (error: unknown) => {
          this.options.logger.error(
            { err: error, session_id: sessionId },
            'the kept reply of a named request could not be answered',
          );
          resolve({ ok: false, reason: 'failed' });
        },
      );
    }
    const keep = named && store.keepReply ? (value: T) => this.keepReply(named, value) : undefined;
    const at = this.options.clock.now();
    const actor = this.options.admit(sessionId, routing, at);
    if (typeof actor === 'string') return resolve({ ok: false, reason: actor });

    // Most replies arrive within `actor.send`: those need no timer, pending entry or settle closures.
    let replied: AskResult<T> | undefined;
    let later: ((result: AskResult<T>) => void) | undefined;
    const command = build((value) => {
      // Within the turn the machine changed state in: queued into the same commit.
      keep?.(value);
      if (later) later({ ok: true, value });
      else replied ??= { ok: true, value };
    }, at);
    const { metrics } = this.options;
    const started = metrics ? stepStarted() : 0;
    actor.send(command);
    if (metrics) observeStep(metrics, command.type, started);
    if (replied) return resolve(replied);
    if (actor.getSnapshot().status === 'error') return resolve({ ok: false, reason: 'failed' });
    // Replies that wait on media calls arrive later; a machine bug must not hang the request.
    later = this.options.pending.wait(actor, resolve);
  }
}
