/**
 * Replies that come after a command's step: a voice start or stop answers once its media work is
 * done. Each waits here under a deadline, so a machine bug cannot hang a request, and a session
 * that fails, or whose changes the store refused, answers every one of them at once.
 */
import type { AppClock } from '../integrations/clock.js';
import type { AskFailure, AskResult } from './session-host.js';

export class PendingReplies<Session extends object> {
  private readonly waiting = new Map<Session, Set<(failure: AskFailure) => void>>();

  constructor(
    private readonly clock: AppClock,
    private readonly timeoutMs: number,
  ) {}

  /** Waits for a reply of `session`; `resolve` gets it once, or `timeout` when none comes in time. Returns where the reply goes. */
  wait<T>(session: Session, resolve: (result: AskResult<T>) => void): (result: AskResult<T>) => void {
    let settled = false;
    let timer: unknown;
    const settle = (result: AskResult<T>) => {
      if (settled) return;
      settled = true;
      if (timer !== undefined) this.clock.clearTimeout(timer);
      this.waiting.get(session)?.delete(fail);
      resolve(result);
    };
    const fail = (failure: AskFailure) => settle(failure);
    let replies = this.waiting.get(session);
    if (!replies) this.waiting.set(session, (replies = new Set()));
    replies.add(fail);
    timer = this.clock.setTimeout(() => fail({ ok: false, reason: 'timeout' }), this.timeoutMs);
    return settle;
  }

  /** Whether a reply of `session` is still awaited. */
  has(session: Session): boolean {
    return (this.waiting.get(session)?.size ?? 0) > 0;
  }

  /** Every reply `session` still owes is answered with `failure`. */
  failAll(session: Session, failure: AskFailure): void {
    for (const fail of [...(this.waiting.get(session) ?? [])]) fail(failure);
    this.waiting.delete(session);
  }

  /** The session left memory: its replies are no longer waited on here. */
  forget(session: Session): void {
    this.waiting.delete(session);
  }
}
