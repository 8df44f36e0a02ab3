/**
 * Calls, their transcripts and reports, the consent record and the webhook outbox, in the store's
 * SQLite database (docs/explanation/calls.md, docs/reference/webhooks.md). `record` is called for each activity item
 * inside the transaction that commits it, so a call's report and the outbox rows that announce it
 * are kept in the same commit as the change, or not at all.
 */
import { randomUUID } from 'node:crypto';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { ActivityItem } from '../domain/activity.js';
import type { CallRecord, CallTurn, ConsentDecision, ConsentEntry } from '../domain/call-record.js';
import { waitsForPerson } from '../domain/call-record.js';
import type { CallRows, LedgerOptions, ResolveWatch } from './call-ledger.js';
import { CallLedger } from './call-ledger.js';
import type { DeliveryStatus, WebhookMessage, WebhookType } from '../domain/webhook-message.js';
import { isoTime } from '../integrations/clock.js';

export interface CallBookOptions extends LedgerOptions {
  /** WEBHOOK_URL: each message gets one delivery per address; none, no outbox rows. */
  webhookUrls: readonly string[];
}

const NO_WATCHES: readonly ResolveWatch[] = [];

/** A call as read: its record and transcript. */
export type CallView = CallRecord & { transcript: CallTurn[] };

export interface Delivery {
  id: number;
  message_id: string;
  type: WebhookType;
  url: string;
  payload: string;
  created_at: number;
  status: DeliveryStatus;
  attempts: number;
  next_at: number | null;
  last_attempt_at: number | null;
  last_status: number | null;
  last_error: string | null;
}

export interface DeliveryQuery {
  limit: number;
  status?: DeliveryStatus | undefined;
}

/** What an erasure removed, by kind. */
export interface ErasedCounts {
  sessions: number;
  calls: number;
  transcript_turns: number;
  consent_records: number;
  activity_items: number;
  webhook_deliveries: number;
}

type CallRow = { call_id: string; record: string };

export class CallBook {
  private readonly sql: ReturnType<typeof prepareCalls>;
  private readonly ledger: CallLedger;
  /**
   * The ended calls whose window is open, by session: read from the file at start (`resolve_until`),
   * so an item of a session with none costs one lookup here, not a query.
   */
  private readonly watching = new Map<string, ResolveWatch[]>();

  constructor(
    readonly db: DatabaseSync,
    private readonly options: CallBookOptions,
  ) {
    this.sql = prepareCalls(db);
    this.ledger = new CallLedger(this.rows(), options);
    for (const row of this.sql.resolveWatches.all() as {
      session_id: string;
      record: string;
      resolve_until: number;
    }[]) {
      const call = JSON.parse(row.record) as CallRecord;
      if (call.start.step !== null)
        this.watch(row.session_id, { callId: call.call_id, step: call.start.step, until: row.resolve_until });
    }
  }

  get webhooksConfigured(): boolean {
    return this.options.webhookUrls.length > 0;
  }

  /** What one committed activity item does to the calls; run inside the transaction that commits it. */
  record(item: ActivityItem, at: number): void {
    this.ledger.record(item, at);
  }

  // Reads

  callsOfSession(sessionId: string, limit: number): CallView[] {
    const rows = this.sql.callsOfSession.all(sessionId, limit) as CallRow[];
    return rows.map((row) => this.view(row));
  }

  call(callId: string): CallView | undefined {
    const row = this.sql.call.get(callId) as CallRow | undefined;
    return row && this.view(row);
  }

  /** The running calls whose user waits for a person, longest waiting first (docs/explanation/handoff.md). */
  waitingHandoffs(): CallView[] {
    return (this.sql.openCalls.all() as CallRow[])
      .map((row) => this.view(row))
      .filter(waitsForPerson)
      .sort((a, b) => a.handoff!.at - b.handoff!.at);
  }

  consents(sessionId: string): ConsentEntry[] {
    return this.sql.consentsOf.all(sessionId) as unknown as ConsentEntry[];
  }

  // The outbox

  /** Queues `data` as a message of `type` to every WEBHOOK_URL; in the caller's transaction when it has one. `held`: not sent until released. */
  enqueue(
    type: WebhookType,
    data: Record<string, unknown>,
    sessionId: string | null,
    at: number,
    held?: { callId: string },
  ): void {
    if (this.options.webhookUrls.length === 0) return;
    const message: WebhookMessage = { type, timestamp: isoTime(at), data };
    const payload = JSON.stringify(message);
    const messageId = `msg_${randomUUID().replaceAll('-', '')}`;
    for (const url of this.options.webhookUrls)
      this.sql.enqueue.run(
        messageId,
        type,
        url,
        payload,
        sessionId,
        held?.callId ?? null,
        at,
        held ? 'held' : 'pending',
        held ? null : at,
      );
  }

  /** Calls whose summary the language model has yet to write, oldest first. */
  pendingSummaries(limit: number): CallView[] {
    return (this.sql.pendingSummaries.all(limit) as CallRow[]).map((row) => this.view(row));
  }

  /**
   * The model's summary of a call (undefined: none came, the record's stays), in its report and in
   * the `call.ended` held for it, which is then due at `at`.
   */
  summarized(callId: string, summary: string | undefined, at: number): void {
    const row = this.sql.call.get(callId) as CallRow | undefined;
    if (!row) return;
    const call = JSON.parse(row.record) as CallRecord;
    if (summary !== undefined && call.report) call.report = { ...call.report, summary, summary_source: 'model' };
    this.db.exec('BEGIN');
    try {
      this.sql.saveSummary.run(JSON.stringify(call), callId);
      for (const held of this.sql.heldOf.all(callId) as { id: number; payload: string }[]) {
        const message = JSON.parse(held.payload) as WebhookMessage;
        message.data = { ...message.data, report: call.report };
        this.sql.release.run(JSON.stringify(message), at, held.id);
      }
      this.db.exec('COMMIT');
    } catch (error) {
      this.db.exec('ROLLBACK');
      throw error;
    }
  }

  /** Pending deliveries due at `now`, oldest first. */
  due(now: number, limit: number): Delivery[] {
    return this.sql.due.all(now, limit) as unknown as Delivery[];
  }

  /** The earliest time a pending delivery is due; undefined when none is pending. */
  nextDue(): number | undefined {
    return (this.sql.nextDue.get() as { at: number | null }).at ?? undefined;
  }

  /** When the call that ended first ended; undefined when none has. */
  oldestEnded(): number | undefined {
    return (this.sql.oldestEnded.get() as { at: number | null }).at ?? undefined;
  }

  delivered(id: number, at: number, status: number): void {
    this.sql.delivered.run(at, status, id);
  }

  /** An attempt failed: tried again at `nextAt`, or kept as failed when it is null. */
  attemptFailed(id: number, at: number, status: number | null, error: string, nextAt: number | null): void {
    this.sql.attemptFailed.run(nextAt === null ? 'failed' : 'pending', at, status, error.slice(0, 300), nextAt, id);
  }

  deliveries(query: DeliveryQuery): Delivery[] {
    return (query.status
      ? this.sql.deliveriesByStatus.all(query.status, query.limit)
      : this.sql.deliveries.all(query.limit)) as unknown as Delivery[];
  }

  delivery(id: number): Delivery | undefined {
    return this.sql.delivery.get(id) as unknown as Delivery | undefined;
  }

  /** Sends a delivery again: pending and due now, its attempts kept. */
  retry(id: number, now: number): Delivery | undefined {
    this.sql.retry.run(now, id);
    return this.delivery(id);
  }

  /** Closes the windows that ended before `now`: those calls' outcomes stand (CALL_RESOLVE_WINDOW_MINUTES). */
  closeResolveWindows(now: number): void {
    this.sql.closeResolveWindows.run(now);
    for (const [sessionId, watches] of this.watching) {
      const open = watches.filter((watch) => watch.until >= now);
      if (open.length === 0) this.watching.delete(sessionId);
      else this.watching.set(sessionId, open);
    }
  }

  // Retention and erasure

  /** Drops the transcripts and reports of calls that ended before `cutoff` (TRANSCRIPT_RETENTION_DAYS). */
  pruneEndedBefore(cutoff: number): number {
    this.db.exec('BEGIN');
    try {
      this.sql.pruneTurns.run(cutoff);
      const { changes } = this.sql.pruneCalls.run(cutoff);
      this.db.exec('COMMIT');
      return Number(changes);
    } catch (error) {
      this.db.exec('ROLLBACK');
      throw error;
    }
  }

  /** Deletes every call, turn, consent entry and delivery of these sessions and of `userId`; in the caller's transaction. */
  eraseWithin(sessionIds: readonly string[], userId: string): Omit<ErasedCounts, 'sessions' | 'activity_items'> {
    const counts = { calls: 0, transcript_turns: 0, consent_records: 0, webhook_deliveries: 0 };
    const callIds = new Set<string>();
    for (const sessionId of sessionIds)
      for (const row of this.sql.callIdsOfSession.all(sessionId) as { call_id: string }[]) callIds.add(row.call_id);
    for (const row of this.sql.callIdsOfUser.all(userId) as { call_id: string }[]) callIds.add(row.call_id);
    for (const callId of callIds) {
      counts.transcript_turns += Number(this.sql.deleteTurns.run(callId).changes);
      counts.calls += Number(this.sql.deleteCall.run(callId).changes);
    }
    for (const sessionId of sessionIds) {
      counts.consent_records += Number(this.sql.deleteConsentsOfSession.run(sessionId).changes);
      counts.webhook_deliveries += Number(this.sql.deleteDeliveriesOfSession.run(sessionId).changes);
    }
    counts.consent_records += Number(this.sql.deleteConsentsOfUser.run(userId).changes);
    return counts;
  }

  /** The erasure itself, kept without the user's data. */
  noteErasure(erasureId: string, at: number, removed: ErasedCounts): void {
    this.sql.noteErasure.run(erasureId, at, JSON.stringify(removed));
  }

  private watch(sessionId: string, watch: ResolveWatch): void {
    const watches = this.watching.get(sessionId);
    if (watches) watches.push(watch);
    else this.watching.set(sessionId, [watch]);
  }

  private latestConsent(sessionId: string): ConsentDecision | undefined {
    return (this.sql.latestConsent.get(sessionId) as { decision: ConsentDecision } | undefined)?.decision;
  }

  private openCall(sessionId: string): CallRecord | undefined {
    const row = this.sql.openCall.get(sessionId) as CallRow | undefined;
    return row && (JSON.parse(row.record) as CallRecord);
  }

  private save(call: CallRecord): void {
    this.sql.saveCall.run(call.ended_at, call.user_id, JSON.stringify(call), call.call_id);
  }

  /** The ledger's rows: this database's tables, and the windows watched in memory. */
  private rows(): CallRows {
    const { sql } = this;
    return {
      openCall: (sessionId) => this.openCall(sessionId),
      call: (callId) => {
        const row = sql.call.get(callId) as CallRow | undefined;
        return row && (JSON.parse(row.record) as CallRecord);
      },
      insertCall: (record) =>
        void sql.insertCall.run(
          record.call_id,
          record.session_id,
          record.user_id,
          record.started_at,
          JSON.stringify(record),
        ),
      saveCall: (record) => this.save(record),
      insertTurn: (callId, turn) =>
        void sql.insertTurn.run(callId, turn.role, turn.channel, turn.text, turn.at, turn.screen),
      deleteTurns: (callId) => void sql.deleteTurns.run(callId),
      latestConsent: (sessionId) => this.latestConsent(sessionId),
      insertConsent: (entry) =>
        void sql.insertConsent.run(
          entry.session_id,
          entry.user_id,
          entry.decision,
          entry.notice_version,
          entry.language,
          entry.at,
        ),
      setResolveUntil: (call, until) => {
        sql.setResolveUntil.run(until, call.call_id);
        if (until !== null && call.start.step !== null)
          this.watch(call.session_id, { callId: call.call_id, step: call.start.step, until });
      },
      watches: (sessionId) => this.watching.get(sessionId) ?? NO_WATCHES,
      markSummaryPending: (callId) => void sql.markSummaryPending.run(callId),
      holdsMessage: (callId) => (sql.heldOf.all(callId) as unknown[]).length > 0,
      enqueue: (type, data, sessionId, at, held) => this.enqueue(type, data, sessionId, at, held),
      newId: () => randomUUID(),
    };
  }

  private view(row: CallRow): CallView {
    const record = JSON.parse(row.record) as CallRecord;
    const transcript = this.sql.turnsOf.all(row.call_id) as unknown as CallTurn[];
    // A report written before the outcome could change after the call says nothing of it: it cannot.
    const report = record.report && {
      ...record.report,
      outcome_open_until: record.report.outcome_open_until ?? null,
      resolved_at: record.report.resolved_at ?? null,
    };
    return { ...record, report, transcript };
  }
}

function prepareCalls(db: DatabaseSync) {
  return {
    insertCall: db.prepare(
      'INSERT INTO calls (call_id, session_id, user_id, started_at, ended_at, record) VALUES (?, ?, ?, ?, NULL, ?)',
    ),
    saveCall: db.prepare('UPDATE calls SET ended_at = ?, user_id = ?, record = ? WHERE call_id = ?'),
    call: db.prepare('SELECT call_id, record FROM calls WHERE call_id = ?'),
    openCall: db.prepare(
      'SELECT call_id, record FROM calls WHERE session_id = ? AND ended_at IS NULL ORDER BY started_at DESC LIMIT 1',
    ),
    openCalls: db.prepare('SELECT call_id, record FROM calls WHERE ended_at IS NULL'),
    callsOfSession: db.prepare(
      'SELECT call_id, record FROM calls WHERE session_id = ? ORDER BY started_at DESC LIMIT ?',
    ),
    callIdsOfSession: db.prepare('SELECT call_id FROM calls WHERE session_id = ?'),
    callIdsOfUser: db.prepare('SELECT call_id FROM calls WHERE user_id = ?'),
    insertTurn: db.prepare(
      'INSERT INTO call_turns (call_id, role, channel, text, at, screen) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    turnsOf: db.prepare('SELECT role, channel, text, at, screen FROM call_turns WHERE call_id = ? ORDER BY id'),
    deleteTurns: db.prepare('DELETE FROM call_turns WHERE call_id = ?'),
    deleteCall: db.prepare('DELETE FROM calls WHERE call_id = ?'),
    pruneTurns: db.prepare('DELETE FROM call_turns WHERE call_id IN (SELECT call_id FROM calls WHERE ended_at < ?)'),
    pruneCalls: db.prepare('DELETE FROM calls WHERE ended_at < ?'),
    insertConsent: db.prepare(
      'INSERT INTO consents (session_id, user_id, decision, notice_version, language, at) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    latestConsent: db.prepare('SELECT decision FROM consents WHERE session_id = ? ORDER BY id DESC LIMIT 1'),
    consentsOf: db.prepare(
      'SELECT session_id, user_id, decision, notice_version, language, at FROM consents WHERE session_id = ? ORDER BY id',
    ),
    deleteConsentsOfSession: db.prepare('DELETE FROM consents WHERE session_id = ?'),
    deleteConsentsOfUser: db.prepare('DELETE FROM consents WHERE user_id = ?'),
    enqueue: db.prepare(
      'INSERT INTO webhook_outbox (message_id, type, url, payload, session_id, call_id, ' +
        'created_at, status, attempts, next_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?)',
    ),
    pendingSummaries: db.prepare(
      'SELECT call_id, record FROM calls WHERE summary_pending = 1 ORDER BY ended_at LIMIT ?',
    ),
    markSummaryPending: db.prepare('UPDATE calls SET summary_pending = 1 WHERE call_id = ?'),
    saveSummary: db.prepare('UPDATE calls SET record = ?, summary_pending = 0 WHERE call_id = ?'),
    heldOf: db.prepare("SELECT id, payload FROM webhook_outbox WHERE call_id = ? AND status = 'held'"),
    release: db.prepare("UPDATE webhook_outbox SET payload = ?, status = 'pending', next_at = ? WHERE id = ?"),
    due: db.prepare(
      "SELECT * FROM webhook_outbox WHERE status = 'pending' AND next_at <= ? ORDER BY next_at, id LIMIT ?",
    ),
    oldestEnded: db.prepare('SELECT min(ended_at) AS at FROM calls WHERE ended_at IS NOT NULL'),
    nextDue: db.prepare("SELECT min(next_at) AS at FROM webhook_outbox WHERE status = 'pending'"),
    delivered: db.prepare(
      "UPDATE webhook_outbox SET status = 'delivered', attempts = attempts + 1, next_at = NULL, " +
        'last_attempt_at = ?, last_status = ?, last_error = NULL WHERE id = ?',
    ),
    attemptFailed: db.prepare(
      'UPDATE webhook_outbox SET status = ?, attempts = attempts + 1, last_attempt_at = ?, last_status = ?, last_error = ?, next_at = ? WHERE id = ?',
    ),
    deliveries: db.prepare('SELECT * FROM webhook_outbox ORDER BY id DESC LIMIT ?'),
    deliveriesByStatus: db.prepare('SELECT * FROM webhook_outbox WHERE status = ? ORDER BY id DESC LIMIT ?'),
    delivery: db.prepare('SELECT * FROM webhook_outbox WHERE id = ?'),
    retry: db.prepare("UPDATE webhook_outbox SET status = 'pending', next_at = ? WHERE id = ?"),
    deleteDeliveriesOfSession: db.prepare('DELETE FROM webhook_outbox WHERE session_id = ?'),
    noteErasure: db.prepare('INSERT INTO erasures (erasure_id, at, removed) VALUES (?, ?, ?)'),
    resolveWatches: db.prepare('SELECT session_id, record, resolve_until FROM calls WHERE resolve_until IS NOT NULL'),
    setResolveUntil: db.prepare('UPDATE calls SET resolve_until = ? WHERE call_id = ?'),
    closeResolveWindows: db.prepare('UPDATE calls SET resolve_until = NULL WHERE resolve_until < ?'),
  } satisfies Record<string, StatementSync>;
}
