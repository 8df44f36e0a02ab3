/**
 * Calls, webhook deliveries and erasure as the routes see them (docs/explanation/calls.md, docs/reference/webhooks.md),
 * wherever they are kept: this process's store (`localCallRecords`), or Restate's objects in
 * cluster mode (src/cluster/remote-call-records.ts). Reads may wait on another process.
 */
import { randomUUID } from 'node:crypto';
import type { AppClock } from '../integrations/clock.js';
import type { CallBook, CallView, Delivery, DeliveryQuery, ErasedCounts } from '../store/call-book.js';
import type { UserErasure } from '../store/ports.js';
import type { SessionHost } from './session-host.js';

export interface Erasure {
  erasure_id: string;
  erased_at_ms: number;
  removed: ErasedCounts;
}

export interface CallRecords {
  /** A session's calls, newest first. */
  callsOfSession(sessionId: string, limit: number): Promise<CallView[]>;
  call(callId: string): Promise<CallView | undefined>;
  /** The running calls whose user waits for a person, longest waiting first (docs/explanation/handoff.md). */
  waitingHandoffs(): Promise<CallView[]>;
  /** Deliveries, newest first. */
  deliveries(query: DeliveryQuery): Promise<Delivery[]>;
  /** Sends a delivery again now, its attempts kept; undefined when there is none. */
  retry(id: number): Promise<Delivery | undefined>;
  /** Erases every session, call, transcript, consent entry, activity item and delivery of the user. */
  eraseUser(userId: string): Promise<Erasure>;
}

export interface LocalCallParts {
  calls: CallBook;
  erasure: UserErasure;
  /** Lets go of the user's sessions and names them. */
  host: Pick<SessionHost, 'eraseUser'>;
  clock: AppClock;
  /** Something was queued or is due: deliver now. */
  nudge(): void;
}

/** One process: the store's call book, and an erasure in one transaction of the store. */
export function localCallRecords(parts: LocalCallParts): CallRecords | undefined {
  const { calls, erasure, host, clock } = parts;
  const letGo = host.eraseUser;
  if (!letGo) return undefined;
  return {
    callsOfSession: (sessionId, limit) => Promise.resolve(calls.callsOfSession(sessionId, limit)),
    call: (callId) => Promise.resolve(calls.call(callId)),
    waitingHandoffs: () => Promise.resolve(calls.waitingHandoffs()),
    deliveries: (query) => Promise.resolve(calls.deliveries(query)),
    retry: (id) => {
      if (!calls.delivery(id)) return Promise.resolve(undefined);
      const delivery = calls.retry(id, clock.now());
      parts.nudge();
      return Promise.resolve(delivery);
    },
    eraseUser: (userId) => {
      const sessionIds = letGo.call(host, userId);
      let named: { erasureId: string; at: number } | undefined;
      const removed = erasure.eraseUser(
        userId,
        sessionIds,
        () => (named = { erasureId: `era_${randomUUID().replaceAll('-', '')}`, at: clock.now() }),
      );
      parts.nudge();
      return Promise.resolve({ erasure_id: named!.erasureId, erased_at_ms: named!.at, removed });
    },
  };
}
