/**
 * Calls, their transcripts and reports, the consent record and the webhook outbox, in the store's
 * SQLite database (docs/calls.md, docs/webhooks.md). `record` is called for each activity item
 * inside the transaction that commits it, so a call's report and the outbox rows that announce it
 * are kept in the same commit as the change, or not at all.
 */
import { randomUUID } from 'node:crypto';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { ActivityItem } from '../domain/activity.js';
import type { CallPlace, CallRecord, CallTurn, ConsentDecision, ConsentEntry, EndedBy, TurnChannel, TurnRole } from '../domain/call-record.js';
import { ENDED_BY, MAX_CONTEXT_VERSIONS, callReport, keepsTranscript, mayResolveLater, resolvedAfterCall, turnText } from '../domain/call-record.js';
import { windowScreen } from '../domain/error-window.js';
import type { DeliveryStatus, WebhookMessage, WebhookType } from '../domain/webhook-message.js';
import { isoTime } from '../integrations/clock.js';

export interface CallBookOptions {
  /** WEBHOOK_URL: each message gets one delivery per address; none, no outbox rows. */
  webhookUrls: readonly string[];
  /**
   * A language model writes summaries (CALL_SUMMARY_MODEL_BASE_URL): a call's `call.ended` is held
   * until its summary is written or given up on (`summarized`), so the message carries it.
   */
  summaryModel?: boolean;
  /** CALL_RESOLVE_WINDOW_MINUTES, in ms: an ended call whose user moves past its step this long after it becomes resolved; 0 or absent, never. */
  resolveWindowMs?: number;
}

/** An ended call whose outcome may still become resolved: its step, and until when. */
interface ResolveWatch {
  callId: string;
  step: string;
  until: number;
}

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

const stringList = (value: unknown, max: number): string[] => (Array.isArray(value) ? value.filter((code): code is string => typeof code === 'string').slice(0, max) : []);
const stringOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** Where the user was, as a session_start or session_stop item says. */
function placeOf(payload: Record<string, unknown>): CallPlace {
  return { screen: stringOrNull(payload.screen), step: stringOrNull(payload.step), errors: stringList(payload.errors, 20) };
}

const DECISIONS = new Set<string>(['given', 'refused', 'withdrawn']);

export class CallBook {
  private readonly sql: ReturnType<typeof prepareCalls>;
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
    for (const row of this.sql.resolveWatches.all() as { session_id: string; record: string; resolve_until: number }[]) {
      const call = JSON.parse(row.record) as CallRecord;
      if (call.start.step !== null) this.watch(row.session_id, { callId: call.call_id, step: call.start.step, until: row.resolve_until });
    }
  }

  get webhooksConfigured(): boolean {
    return this.options.webhookUrls.length > 0;
  }

  /** What one committed activity item does to the calls; run inside the transaction that commits it. */
  record(item: ActivityItem, at: number): void {
    const sessionId = item.session_id;
    if (sessionId === null) return;
    const { payload } = item;
    if (this.watching.size > 0 && (item.kind === 'event' || item.kind === 'session_start')) this.movedOn(sessionId, payload, at);
    switch (item.kind) {
      case 'session_start':
        this.started(sessionId, item, at);
        return;
      case 'session_stop':
        if (payload.was_active === true) this.ended(sessionId, payload, at);
        return;
      case 'consent':
        this.consented(sessionId, item, at);
        return;
      case 'voice_agent_context_fetch': {
        const version = stringOrNull(payload.context_version);
        const call = this.openCall(sessionId);
        if (version === null || !call || call.context_versions.includes(version) || call.context_versions.length >= MAX_CONTEXT_VERSIONS) return;
        call.context_versions.push(version);
        this.save(call);
        return;
      }
      case 'event':
        if (payload.event === 'voice_conversation_turn') this.turn(sessionId, payload, at);
        else if (payload.event === 'handoff_requested') this.handoff(sessionId, item, at);
        return;
      default:
        return;
    }
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

  consents(sessionId: string): ConsentEntry[] {
    return this.sql.consentsOf.all(sessionId) as unknown as ConsentEntry[];
  }

  // The outbox

  /** Queues `data` as a message of `type` to every WEBHOOK_URL; in the caller's transaction when it has one. `held`: not sent until released. */
  enqueue(type: WebhookType, data: Record<string, unknown>, sessionId: string | null, at: number, held?: { callId: string }): void {
    if (this.options.webhookUrls.length === 0) return;
    const message: WebhookMessage = { type, timestamp: isoTime(at), data };
    const payload = JSON.stringify(message);
    const messageId = `msg_${randomUUID().replaceAll('-', '')}`;
    for (const url of this.options.webhookUrls) this.sql.enqueue.run(messageId, type, url, payload, sessionId, held?.callId ?? null, at, held ? 'held' : 'pending', held ? null : at);
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
    return (query.status ? this.sql.deliveriesByStatus.all(query.status, query.limit) : this.sql.deliveries.all(query.limit)) as unknown as Delivery[];
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
    for (const sessionId of sessionIds) for (const row of this.sql.callIdsOfSession.all(sessionId) as { call_id: string }[]) callIds.add(row.call_id);
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

  // What items do

  private started(sessionId: string, item: ActivityItem, at: number): void {
    const open = this.openCall(sessionId);
    if (open && item.payload.resumed === true) return;
    // A start that is not a resume begins a new call: one left open (a stop lost with its process) ends here.
    if (open) this.close(open, { screen: open.start.screen, step: open.start.step, errors: [] }, 'client', at);
    const callId = stringOrNull(item.payload.assistant_invocation_id) ?? randomUUID();
    if (this.sql.call.get(callId)) return;
    const consent = this.latestConsent(sessionId);
    const record: CallRecord = {
      call_id: callId,
      session_id: sessionId,
      user_id: item.user_id,
      started_at: at,
      ended_at: null,
      ended_by: null,
      start: placeOf(item.payload),
      end: null,
      context_versions: [],
      turns: { user: 0, agent: 0 },
      transcript_kept: keepsTranscript(consent),
      handoff: null,
      report: null,
    };
    this.sql.insertCall.run(callId, sessionId, item.user_id, at, JSON.stringify(record));
  }

  private ended(sessionId: string, payload: Record<string, unknown>, at: number): void {
    const call = this.openCall(sessionId);
    if (!call) return;
    // A stop names no ender: the client's. The session's own ends name theirs.
    const named = ENDED_BY.find((ender) => ender === payload.ended_by);
    const endedBy: EndedBy = named ?? 'client';
    this.close(call, placeOf(payload), endedBy, at);
  }

  private close(call: CallRecord, end: CallPlace, endedBy: EndedBy, at: number): void {
    call.ended_at = at;
    call.ended_by = endedBy;
    call.end = end;
    call.report = callReport(call);
    // Not resolved yet: it becomes so if the user moves past the step within the window (docs/calls.md, "The report").
    const windowMs = this.options.resolveWindowMs ?? 0;
    if (windowMs > 0 && mayResolveLater(call) && call.start.step !== null) {
      call.report.outcome_open_until = isoTime(at + windowMs);
      this.sql.setResolveUntil.run(at + windowMs, call.call_id);
      this.watch(call.session_id, { callId: call.call_id, step: call.start.step, until: at + windowMs });
    }
    this.save(call);
    const { call_id, session_id, started_at, ended_at, ended_by, start, context_versions, transcript_kept, report } = call;
    const held = this.options.summaryModel ? { callId: call_id } : undefined;
    if (held) this.sql.markSummaryPending.run(call_id);
    this.enqueue('call.ended', { call_id, session_id, started_at: isoTime(started_at), ended_at: isoTime(ended_at), ended_by, start, end, context_versions, transcript_kept, report }, session_id, at, held);
  }

  private watch(sessionId: string, watch: ResolveWatch): void {
    const watches = this.watching.get(sessionId);
    if (watches) watches.push(watch);
    else this.watching.set(sessionId, [watch]);
  }

  /**
   * An item of a session that names where the user is: each ended call of the session still in
   * its window, whose step that is not, is resolved. The watch stays until its window closes (a
   * commit refused after this must not lose it); the call's own report says it is decided.
   */
  private movedOn(sessionId: string, payload: Record<string, unknown>, at: number): void {
    const watches = this.watching.get(sessionId);
    const screen = stringOrNull(payload.screen);
    if (!watches || screen === null) return;
    const step = windowScreen(screen);
    for (const watch of watches) if (at <= watch.until && step !== '' && step !== watch.step) this.resolveAfter(watch.callId, step, at);
  }

  private resolveAfter(callId: string, step: string, at: number): void {
    const row = this.sql.call.get(callId) as CallRow | undefined;
    if (!row) return;
    const call = JSON.parse(row.record) as CallRecord;
    if (!call.report || !mayResolveLater(call) || call.report.outcome_open_until === null) return;
    const previous = call.report.outcome;
    call.report = resolvedAfterCall(call, call.report, step, isoTime(at));
    this.save(call);
    this.sql.setResolveUntil.run(null, callId);
    // A call.ended still held for its summary carries the report as it stands when released;
    // one already due or sent is followed by this message.
    if ((this.sql.heldOf.all(callId) as unknown[]).length > 0) return;
    const { call_id, session_id, ended_at, report } = call;
    this.enqueue('call.outcome_updated', { call_id, session_id, ended_at: ended_at === null ? null : isoTime(ended_at), previous_outcome: previous, report }, session_id, at);
  }

  private turn(sessionId: string, payload: Record<string, unknown>, at: number): void {
    const call = this.openCall(sessionId);
    if (!call) return;
    const role: TurnRole = payload.role === 'agent' ? 'agent' : 'user';
    const channel: TurnChannel = payload.channel === 'chat' ? 'chat' : 'voice';
    call.turns[role] += 1;
    const kept = keepsTranscript(this.latestConsent(sessionId));
    call.transcript_kept = kept;
    this.save(call);
    // Without consent given, and after it is withdrawn, the words are not kept: only that a turn was said.
    if (!kept || typeof payload.text !== 'string') return;
    this.sql.insertTurn.run(call.call_id, role, channel, turnText(payload.text), at, stringOrNull(payload.screen));
  }

  private handoff(sessionId: string, item: ActivityItem, at: number): void {
    const call = this.openCall(sessionId);
    const reason = stringOrNull(item.payload.reason);
    if (call && !call.handoff) {
      call.handoff = { at, reason };
      this.save(call);
    }
    this.enqueue('handoff.requested', { session_id: sessionId, call_id: call?.call_id ?? null, reason, screen: stringOrNull(item.payload.screen), requested_at: isoTime(at) }, sessionId, at);
  }

  private consented(sessionId: string, item: ActivityItem, at: number): void {
    const decision = String(item.payload.decision);
    if (!DECISIONS.has(decision)) return;
    const entry: ConsentEntry = {
      session_id: sessionId,
      user_id: item.user_id,
      decision: decision as ConsentDecision,
      notice_version: String(item.payload.notice_version ?? ''),
      language: String(item.payload.language ?? ''),
      at,
    };
    this.sql.insertConsent.run(entry.session_id, entry.user_id, entry.decision, entry.notice_version, entry.language, at);
    const call = this.openCall(sessionId);
    if (call) {
      call.transcript_kept = keepsTranscript(entry.decision);
      this.save(call);
      // Withdrawn: what the running call kept goes too, not only what would come.
      if (entry.decision === 'withdrawn') this.sql.deleteTurns.run(call.call_id);
    }
    const { decision: given, notice_version, language } = entry;
    this.enqueue('consent.recorded', { session_id: sessionId, call_id: call?.call_id ?? null, decision: given, notice_version, language, recorded_at: isoTime(at) }, sessionId, at);
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

  private view(row: CallRow): CallView {
    const record = JSON.parse(row.record) as CallRecord;
    const transcript = this.sql.turnsOf.all(row.call_id) as unknown as CallTurn[];
    // A report written before the outcome could change after the call says nothing of it: it cannot.
    const report = record.report && { ...record.report, outcome_open_until: record.report.outcome_open_until ?? null, resolved_at: record.report.resolved_at ?? null };
    return { ...record, report, transcript };
  }
}

function prepareCalls(db: DatabaseSync) {
  return {
    insertCall: db.prepare('INSERT INTO calls (call_id, session_id, user_id, started_at, ended_at, record) VALUES (?, ?, ?, ?, NULL, ?)'),
    saveCall: db.prepare('UPDATE calls SET ended_at = ?, user_id = ?, record = ? WHERE call_id = ?'),
    call: db.prepare('SELECT call_id, record FROM calls WHERE call_id = ?'),
    openCall: db.prepare('SELECT call_id, record FROM calls WHERE session_id = ? AND ended_at IS NULL ORDER BY started_at DESC LIMIT 1'),
    callsOfSession: db.prepare('SELECT call_id, record FROM calls WHERE session_id = ? ORDER BY started_at DESC LIMIT ?'),
    callIdsOfSession: db.prepare('SELECT call_id FROM calls WHERE session_id = ?'),
    callIdsOfUser: db.prepare('SELECT call_id FROM calls WHERE user_id = ?'),
    insertTurn: db.prepare('INSERT INTO call_turns (call_id, role, channel, text, at, screen) VALUES (?, ?, ?, ?, ?, ?)'),
    turnsOf: db.prepare('SELECT role, channel, text, at, screen FROM call_turns WHERE call_id = ? ORDER BY id'),
    deleteTurns: db.prepare('DELETE FROM call_turns WHERE call_id = ?'),
    deleteCall: db.prepare('DELETE FROM calls WHERE call_id = ?'),
    pruneTurns: db.prepare('DELETE FROM call_turns WHERE call_id IN (SELECT call_id FROM calls WHERE ended_at < ?)'),
    pruneCalls: db.prepare('DELETE FROM calls WHERE ended_at < ?'),
    insertConsent: db.prepare('INSERT INTO consents (session_id, user_id, decision, notice_version, language, at) VALUES (?, ?, ?, ?, ?, ?)'),
    latestConsent: db.prepare('SELECT decision FROM consents WHERE session_id = ? ORDER BY id DESC LIMIT 1'),
    consentsOf: db.prepare('SELECT session_id, user_id, decision, notice_version, language, at FROM consents WHERE session_id = ? ORDER BY id'),
    deleteConsentsOfSession: db.prepare('DELETE FROM consents WHERE session_id = ?'),
    deleteConsentsOfUser: db.prepare('DELETE FROM consents WHERE user_id = ?'),
    enqueue: db.prepare('INSERT INTO webhook_outbox (message_id, type, url, payload, session_id, call_id, created_at, status, attempts, next_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?)'),
    pendingSummaries: db.prepare('SELECT call_id, record FROM calls WHERE summary_pending = 1 ORDER BY ended_at LIMIT ?'),
    markSummaryPending: db.prepare('UPDATE calls SET summary_pending = 1 WHERE call_id = ?'),
    saveSummary: db.prepare('UPDATE calls SET record = ?, summary_pending = 0 WHERE call_id = ?'),
    heldOf: db.prepare("SELECT id, payload FROM webhook_outbox WHERE call_id = ? AND status = 'held'"),
    release: db.prepare("UPDATE webhook_outbox SET payload = ?, status = 'pending', next_at = ? WHERE id = ?"),
    due: db.prepare("SELECT * FROM webhook_outbox WHERE status = 'pending' AND next_at <= ? ORDER BY next_at, id LIMIT ?"),
    oldestEnded: db.prepare('SELECT min(ended_at) AS at FROM calls WHERE ended_at IS NOT NULL'),
    nextDue: db.prepare("SELECT min(next_at) AS at FROM webhook_outbox WHERE status = 'pending'"),
    delivered: db.prepare("UPDATE webhook_outbox SET status = 'delivered', attempts = attempts + 1, next_at = NULL, last_attempt_at = ?, last_status = ?, last_error = NULL WHERE id = ?"),
    attemptFailed: db.prepare('UPDATE webhook_outbox SET status = ?, attempts = attempts + 1, last_attempt_at = ?, last_status = ?, last_error = ?, next_at = ? WHERE id = ?'),
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
