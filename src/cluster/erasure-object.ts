/**
 * Cluster mode's erasure (DELETE /api/users/{user_id}, docs/explanation/calls.md): a Restate virtual object
 * keyed by the erasure's id, whose one invocation finds the user's sessions, clears each session
 * object, call book and pending delivery, deletes their activity items from the shared stream,
 * and keeps the erasure's own record (its id, time and counts, nothing of the user). Every step
 * is journaled, so an erasure cut off by a crash finishes where it stopped, and a retry with the
 * same id gets the first answer (docs/decisions/0036-calls-in-cluster-mode.md).
 */
import * as restate from '@restatedev/restate-sdk';
import type { Erasure } from '../actor-system/call-records.js';
import { isoTime } from '../integrations/clock.js';
import type { ErasedCounts } from '../store/call-book.js';
import { CALLS_OBJECT, CALLS_STATE } from './call-book-object.js';
import type { RestateHttp } from './restate-http.js';
import type { KeptSummary } from './session-object.js';
import { SESSION_OBJECT, STATE } from './session-object.js';
import { stateRows } from './state-query.js';
import type { KeptDelivery } from './webhook-object.js';
import { DELIVERY_STATE, WEBHOOK_OBJECT, sendMessage } from './webhook-object.js';

export const ERASURE_OBJECT = 'KycErasure';
const ERASURE_STATE = 'erasure';

export interface ErasureRequest {
  /** As the service keeps it: masked where it reads as an identity value. */
  user_id: string;
}

export interface ErasureObjectDeps {
  /** RESTATE_ADMIN_URL: its SQL finds the user's sessions and their deliveries. */
  admin: RestateHttp;
  /** The shared activity stream. */
  activity: { erase(sessionIds: ReadonlySet<string>, userId: string): Promise<number> };
  webhookUrls: readonly string[];
  queryTimeoutMs: number;
}

/** The sessions of `userId`: those running (their summary names the user) and those whose call book does. */
async function sessionsOf(deps: ErasureObjectDeps, userId: string): Promise<string[]> {
  const [summaries, books] = await Promise.all([
    stateRows<KeptSummary>(deps.admin, SESSION_OBJECT, STATE.summary, deps.queryTimeoutMs),
    stateRows<string[]>(deps.admin, CALLS_OBJECT, CALLS_STATE.users, deps.queryTimeoutMs),
  ]);
  const ids = new Set<string>();
  for (const { key, value } of summaries) if (value.row.user_id === userId) ids.add(key);
  for (const { key, value } of books) if (value.includes(userId)) ids.add(key);
  return [...ids].sort();
}

async function deliveriesOf(deps: ErasureObjectDeps, sessionIds: readonly string[]): Promise<string[]> {
  const sessions = new Set(sessionIds);
  const rows = await stateRows<KeptDelivery>(deps.admin, WEBHOOK_OBJECT, DELIVERY_STATE, deps.queryTimeoutMs);
  return rows.filter(({ value }) => value.session_id !== null && sessions.has(value.session_id)).map(({ key }) => key);
}

const call = <T>(ctx: restate.ObjectContext, service: string, key: string, method: string): Promise<T> =>
  ctx.genericCall({
    service,
    method,
    key,
    parameter: null,
    inputSerde: restate.serde.json,
    outputSerde: restate.serde.json as restate.Serde<T>,
  });

export function erasureObject(deps: ErasureObjectDeps) {
  return restate.object({
    name: ERASURE_OBJECT,
    // Its input names the user: the journal is not kept once it ends (its answer and record hold only counts).
    options: { journalRetention: 0 },
    handlers: {
      run: restate.handlers.object.exclusive(
        async (ctx: restate.ObjectContext, request: ErasureRequest): Promise<Erasure> => {
          if (typeof request?.user_id !== 'string' || request.user_id.length === 0)
            throw new restate.TerminalError('not an erasure request', { errorCode: 400 });
          const done = await ctx.get<Erasure>(ERASURE_STATE);
          if (done) return done;
          const at = await ctx.date.now();
          const userId = request.user_id;
          const sessionIds = await ctx.run('find the sessions', () => sessionsOf(deps, userId));
          const removed: ErasedCounts = {
            sessions: 0,
            calls: 0,
            transcript_turns: 0,
            consent_records: 0,
            activity_items: 0,
            webhook_deliveries: 0,
          };
          for (const sessionId of sessionIds) {
            if (await call<boolean>(ctx, SESSION_OBJECT, sessionId, 'erase')) removed.sessions += 1;
            const book = await call<Pick<ErasedCounts, 'calls' | 'transcript_turns' | 'consent_records'>>(
              ctx,
              CALLS_OBJECT,
              sessionId,
              'erase',
            );
            removed.calls += book.calls;
            removed.transcript_turns += book.transcript_turns;
            removed.consent_records += book.consent_records;
          }
          for (const id of await ctx.run('find the deliveries', () => deliveriesOf(deps, sessionIds))) {
            if (await call<boolean>(ctx, WEBHOOK_OBJECT, id, 'erase')) removed.webhook_deliveries += 1;
          }
          removed.activity_items = await ctx.run('erase the activity items', () =>
            deps.activity.erase(new Set(sessionIds), userId),
          );
          const erasure: Erasure = { erasure_id: ctx.key, erased_at_ms: at, removed };
          ctx.set(ERASURE_STATE, erasure);
          sendMessage(ctx, deps.webhookUrls, {
            type: 'user.erased',
            data: { erasure_id: ctx.key, removed, erased_at: isoTime(at) },
            sessionId: null,
            at,
          });
          return erasure;
        },
      ),
    },
  });
}

export type ErasureObject = ReturnType<typeof erasureObject>;
