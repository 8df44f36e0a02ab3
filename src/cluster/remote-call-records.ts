/**
 * SESSION_HOST=restate: calls, webhook deliveries and erasure as the routes see them
 * (src/actor-system/call-records.ts), read from and sent to Restate's objects (call-book-object.ts,
 * webhook-object.ts, erasure-object.ts) through the ingress, or across objects by the admin SQL.
 */
import { randomUUID } from 'node:crypto';
import type { CallRecords, Erasure } from '../actor-system/call-records.js';
import { DependencyUnavailableError } from '../actor-system/session-host.js';
import type { CallView, Delivery, DeliveryQuery } from '../store/call-book.js';
import type { KeptCall } from './call-book-object.js';
import { CALLS_OBJECT, CALLS_STATE, callKey, callView } from './call-book-object.js';
import { waitsForPerson } from '../domain/call-record.js';
import type { ErasureRequest } from './erasure-object.js';
import { ERASURE_OBJECT } from './erasure-object.js';
import type { RestateHttp } from './restate-http.js';
import { RestateTimeoutError, RestateUnreachableError } from './restate-http.js';
import { stateRows } from './state-query.js';
import type { KeptDelivery } from './webhook-object.js';
import { DELIVERY_STATE, WEBHOOK_OBJECT } from './webhook-object.js';

export interface RemoteCallRecordsOptions {
  ingress: RestateHttp;
  admin: RestateHttp;
  timeoutMs: number;
}

/** An erasure scans the activity stream: it may take longer than a read. */
const ERASURE_TIMEOUT_MS = 120_000;

/** A delivery as the API shows it: the session it concerns is the object's own. */
const shown = ({ session_id: _session, ...delivery }: KeptDelivery): Delivery => delivery;

export function remoteCallRecords({ ingress, admin, timeoutMs }: RemoteCallRecordsOptions): CallRecords {
  /** A call to one object's handler; Restate unreachable or not answering is a 503 naming it. */
  const invoke = async <T>(path: string, body: unknown, idempotencyKey?: string, waitMs = timeoutMs): Promise<T> => {
    const headers: Record<string, string> = idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey };
    const response = await reaching(() =>
      ingress.request(path, { method: 'POST', headers, body: JSON.stringify(body), timeoutMs: waitMs }),
    );
    if (response.status < 200 || response.status >= 300)
      throw new Error(`${path}: ${response.status} ${response.text}`);
    return JSON.parse(response.text) as T;
  };
  return {
    callsOfSession: (sessionId, limit) =>
      invoke<CallView[]>(`${CALLS_OBJECT}/${encodeURIComponent(sessionId)}/list`, limit),
    async call(callId) {
      const rows = await reaching(() => stateRows<KeptCall>(admin, CALLS_OBJECT, callKey(callId), timeoutMs));
      return rows[0] && callView(rows[0].value);
    },
    async waitingHandoffs() {
      const waiting = await reaching(() =>
        stateRows<string>(admin, CALLS_OBJECT, CALLS_STATE.handoffWaiting, timeoutMs),
      );
      const calls = await Promise.all(
        waiting.map(({ value }) => reaching(() => stateRows<KeptCall>(admin, CALLS_OBJECT, callKey(value), timeoutMs))),
      );
      return calls
        .flatMap((rows) => rows.map((row) => callView(row.value)))
        .filter(waitsForPerson)
        .sort((a, b) => a.handoff!.at - b.handoff!.at);
    },
    async deliveries(query: DeliveryQuery) {
      const rows = await reaching(() => stateRows<KeptDelivery>(admin, WEBHOOK_OBJECT, DELIVERY_STATE, timeoutMs));
      return rows
        .map((row) => row.value)
        .filter((delivery) => query.status === undefined || delivery.status === query.status)
        .sort((a, b) => b.created_at - a.created_at || b.id - a.id)
        .slice(0, query.limit)
        .map(shown);
    },
    async retry(id) {
      const delivery = await invoke<KeptDelivery | null>(`${WEBHOOK_OBJECT}/${id}/retry`, null);
      return delivery === null ? undefined : shown(delivery);
    },
    eraseUser(userId) {
      const erasureId = `era_${randomUUID().replaceAll('-', '')}`;
      // Its id is the key: a retry of this call (the ingress cut off) gets the first answer.
      return invoke<Erasure>(
        `${ERASURE_OBJECT}/${erasureId}/run`,
        { user_id: userId } satisfies ErasureRequest,
        erasureId,
        ERASURE_TIMEOUT_MS,
      );
    },
  };
}

async function reaching<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof RestateUnreachableError || error instanceof RestateTimeoutError)
      throw new DependencyUnavailableError('restate');
    throw error;
  }
}
