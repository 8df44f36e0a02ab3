/**
 * Cluster mode's call book (docs/explanation/calls.md, docs/decisions/0036-calls-in-cluster-mode.md): each
 * session's calls, transcripts and consent record are a Restate virtual object keyed by the
 * session id, apart from the session's own object (whose state an idle end clears). The session
 * object hands it the items a call needs by a one-way call journaled in the invocation that made
 * them, so the record follows exactly the changes that were kept; the same ledger as in one
 * process (src/store/call-ledger.ts) decides what each item does.
 */
import * as restate from '@restatedev/restate-sdk';
import type { ActivityItem } from '../domain/activity.js';
import type { CallRecord, CallTurn, ConsentEntry } from '../domain/call-record.js';
import { waitsForPerson } from '../domain/call-record.js';
import type { Summarizer } from '../integrations/summary-model.js';
import type { CallView } from '../store/call-book.js';
import type { CallRows, ResolveWatch } from '../store/call-ledger.js';
import { CallLedger } from '../store/call-ledger.js';
import type { QueuedMessage } from './webhook-object.js';
import { sendMessage } from './webhook-object.js';

export const CALLS_OBJECT = 'KycCalls';

/** The object's state keys; each call is a key of its own (`call:` and its id), so a call is found by id with one query. */
export const CALLS_STATE = {
  ids: 'ids',
  consents: 'consents',
  users: 'users',
  handoffWaiting: 'handoff_waiting',
} as const;
export const callKey = (callId: string): string => `call:${callId}`;

/** A call as the object keeps it. */
export interface KeptCall {
  record: CallRecord;
  transcript: CallTurn[];
  /** Until when its outcome may still become resolved; null when it cannot. */
  resolve_until: number | null;
}

/** What the session object hands over: the items a call needs, each with its time. */
export interface RecordRequest {
  items: { item: ActivityItem; at: number }[];
}

export interface CallsObjectDeps {
  /** WEBHOOK_URL: each message one delivery per address (webhook-object.ts). */
  webhookUrls: readonly string[];
  /** TRANSCRIPT_RETENTION_DAYS; 0 keeps calls. */
  retentionDays: number;
  /** CALL_RESOLVE_WINDOW_MINUTES, in ms. */
  resolveWindowMs: number;
  /** CALL_SUMMARY_MODEL_*: an ended call's summary, written before its call.ended leaves. */
  summarize?: Summarizer | undefined;
}

const DAY_MS = 86_400_000;
/** The model's summary is asked once; a model that fails leaves the record's summary. */
const SUMMARY_RUN = { maxRetryAttempts: 1 };

/** A session's book as read for one invocation, and what it changed. */
interface Book {
  ids: string[];
  calls: Map<string, KeptCall>;
  consents: ConsentEntry[];
  users: string[];
  dirtyCalls: Set<string>;
  dirtyConsents: boolean;
}

async function readBook(ctx: restate.ObjectSharedContext): Promise<Book> {
  const ids = (await ctx.get<string[]>(CALLS_STATE.ids)) ?? [];
  const calls = new Map<string, KeptCall>();
  for (const id of ids) {
    const call = await ctx.get<KeptCall>(callKey(id));
    if (call) calls.set(id, call);
  }
  const consents = (await ctx.get<ConsentEntry[]>(CALLS_STATE.consents)) ?? [];
  const users = (await ctx.get<string[]>(CALLS_STATE.users)) ?? [];
  return { ids, calls, consents, users, dirtyCalls: new Set(), dirtyConsents: false };
}

function writeBook(ctx: restate.ObjectContext, book: Book): void {
  for (const id of book.dirtyCalls) {
    const call = book.calls.get(id);
    if (call) ctx.set(callKey(id), call);
  }
  if (book.dirtyCalls.size > 0) ctx.set(CALLS_STATE.ids, book.ids);
  if (book.dirtyConsents) ctx.set(CALLS_STATE.consents, book.consents);
  ctx.set(CALLS_STATE.users, book.users);
  // The call whose user waits for a person, under a key of its own: the queue is one admin query (remote-call-records.ts).
  const waiting = [...book.calls.values()].find((call) => waitsForPerson(call.record));
  if (waiting) ctx.set(CALLS_STATE.handoffWaiting, waiting.record.call_id);
  else ctx.clear(CALLS_STATE.handoffWaiting);
}

const noteUser = (book: Book, userId: string | null): void => {
  if (userId !== null && !book.users.includes(userId)) book.users.push(userId);
};

/** The ledger's rows over one book in memory; what it queues is collected in `queued`. */
function bookRows(book: Book, queued: (QueuedMessage & { held: boolean })[], newId: () => string): CallRows {
  const touch = (call: KeptCall) => book.dirtyCalls.add(call.record.call_id);
  const open = () =>
    [...book.calls.values()]
      .filter((call) => call.record.ended_at === null)
      .sort((a, b) => b.record.started_at - a.record.started_at)[0];
  return {
    openCall: () => open()?.record,
    call: (callId) => book.calls.get(callId)?.record,
    insertCall: (record) => {
      const call = { record, transcript: [], resolve_until: null };
      book.calls.set(record.call_id, call);
      book.ids.push(record.call_id);
      noteUser(book, record.user_id);
      touch(call);
    },
    saveCall: (record) => {
      const call = book.calls.get(record.call_id);
      if (!call) return;
      call.record = record;
      touch(call);
    },
    insertTurn: (callId, turn) => {
      const call = book.calls.get(callId);
      if (!call) return;
      call.transcript.push(turn);
      touch(call);
    },
    deleteTurns: (callId) => {
      const call = book.calls.get(callId);
      if (!call) return;
      call.transcript = [];
      touch(call);
    },
    latestConsent: () => book.consents.at(-1)?.decision,
    insertConsent: (entry) => {
      book.consents.push(entry);
      noteUser(book, entry.user_id);
      book.dirtyConsents = true;
    },
    setResolveUntil: (record, until) => {
      const call = book.calls.get(record.call_id);
      if (!call) return;
      call.resolve_until = until;
      touch(call);
    },
    watches: () => {
      const watches: ResolveWatch[] = [];
      for (const { record, resolve_until } of book.calls.values()) {
        if (resolve_until !== null && record.start.step !== null)
          watches.push({ callId: record.call_id, step: record.start.step, until: resolve_until });
      }
      return watches;
    },
    // The summary is written in the same invocation, before the message is queued: nothing is held across invocations.
    markSummaryPending: () => undefined,
    holdsMessage: (callId) => queued.some((message) => message.held && message.data.call_id === callId),
    enqueue: (type, data, sessionId, at, held) => queued.push({ type, data, sessionId, at, held: held !== undefined }),
    newId,
  };
}

/** A call as read: a report written before outcomes could change after the call says nothing of it. */
export function callView({ record, transcript }: KeptCall): CallView {
  const report = record.report && {
    ...record.report,
    outcome_open_until: record.report.outcome_open_until ?? null,
    resolved_at: record.report.resolved_at ?? null,
  };
  return { ...record, report, transcript };
}

export function callsObject(deps: CallsObjectDeps) {
  /** The model's summary of an ended call, into its report and its held call.ended. */
  const summarize = async (ctx: restate.ObjectContext, book: Book, message: QueuedMessage): Promise<void> => {
    const call = book.calls.get(String(message.data.call_id));
    if (!deps.summarize || !call?.record.report) return;
    const { summarize: model } = deps;
    const input = {
      facts: call.record.report.summary,
      transcript: call.transcript.map(({ role, text }) => ({ role, text })),
    };
    const summary = await ctx.run(
      'summarize',
      async () => (await model(input).catch(() => undefined)) ?? null,
      SUMMARY_RUN,
    );
    if (summary === null) return;
    call.record.report = { ...call.record.report, summary, summary_source: 'model' };
    book.dirtyCalls.add(call.record.call_id);
    message.data = { ...message.data, report: call.record.report };
  };

  return restate.object({
    name: CALLS_OBJECT,
    handlers: {
      record: restate.handlers.object.exclusive(
        { ingressPrivate: true },
        async (ctx: restate.ObjectContext, request: RecordRequest): Promise<void> => {
          const book = await readBook(ctx);
          const queued: (QueuedMessage & { held: boolean })[] = [];
          const rows = bookRows(book, queued, () => ctx.rand.uuidv4());
          const ledger = new CallLedger(rows, {
            resolveWindowMs: deps.resolveWindowMs,
            summaryModel: deps.summarize !== undefined,
          });
          const openBefore = new Set(
            [...book.calls.values()].filter((call) => call.record.ended_at === null).map((call) => call.record.call_id),
          );
          const heldBefore = new Set(book.calls.keys());
          for (const { item, at } of request.items) ledger.record(item, at);
          for (const message of queued) if (message.held) await summarize(ctx, book, message);
          writeBook(ctx, book);
          for (const message of queued) sendMessage(ctx, deps.webhookUrls, message);
          if (deps.retentionDays <= 0) return;
          // Each call that ended here leaves at its end plus TRANSCRIPT_RETENTION_DAYS: a delayed call, kept by Restate.
          const now = request.items.at(-1)?.at ?? 0;
          for (const { record } of book.calls.values()) {
            const { call_id, ended_at } = record;
            if (ended_at === null || !(openBefore.has(call_id) || !heldBefore.has(call_id))) continue;
            const delay = ended_at + deps.retentionDays * DAY_MS - now;
            const expiry = {
              service: CALLS_OBJECT,
              method: 'expire',
              key: ctx.key,
              parameter: call_id,
              inputSerde: restate.serde.json,
            };
            ctx.genericSend({ ...expiry, delay: Math.max(0, delay) });
          }
        },
      ),
      // TRANSCRIPT_RETENTION_DAYS after the call ended: the call, its transcript and report go.
      expire: restate.handlers.object.exclusive(
        { ingressPrivate: true },
        async (ctx: restate.ObjectContext, callId: string): Promise<void> => {
          const ids = (await ctx.get<string[]>(CALLS_STATE.ids)) ?? [];
          if (!ids.includes(callId)) return;
          ctx.clear(callKey(callId));
          ctx.set(
            CALLS_STATE.ids,
            ids.filter((id) => id !== callId),
          );
        },
      ),
      list: restate.handlers.object.shared(
        async (ctx: restate.ObjectSharedContext, limit: number): Promise<CallView[]> => {
          const book = await readBook(ctx);
          return [...book.calls.values()]
            .sort((a, b) => b.record.started_at - a.record.started_at)
            .slice(0, Math.max(0, limit))
            .map(callView);
        },
      ),
      // An erasure (erasure-object.ts): everything of the session's calls and consent record, counted.
      erase: restate.handlers.object.exclusive({ ingressPrivate: true }, async (ctx: restate.ObjectContext) => {
        const book = await readBook(ctx);
        const calls = [...book.calls.values()];
        ctx.clearAll();
        return {
          calls: calls.length,
          transcript_turns: calls.reduce((sum, call) => sum + call.transcript.length, 0),
          consent_records: book.consents.length,
        };
      }),
    },
  });
}

export type CallsObject = ReturnType<typeof callsObject>;
