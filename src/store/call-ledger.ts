/**
 * What each committed activity item does to a session's calls, consent record and webhook
 * messages (docs/explanation/calls.md), over whatever keeps them (`CallRows`): the SQLite call book
 * (src/store/call-book.ts) in one process, a session's call-book object in Restate
 * (src/cluster/call-book-object.ts) in cluster mode. One rule, two places it is kept:
 * docs/decisions/0036-calls-in-cluster-mode.md.
 */
import type { ActivityItem } from '../domain/activity.js';
import type {
  CallPlace,
  CallRecord,
  CallTurn,
  ConsentDecision,
  ConsentEntry,
  EndedBy,
  TurnChannel,
  TurnRole,
} from '../domain/call-record.js';
import {
  ENDED_BY,
  MAX_CONTEXT_VERSIONS,
  callReport,
  keepsTranscript,
  mayResolveLater,
  resolvedAfterCall,
  turnText,
} from '../domain/call-record.js';
import { windowScreen } from '../domain/error-window.js';
import { HANDOFF_UNANSWERED, OPERATOR_JOINED } from '../domain/sdk-event.js';
import type { WebhookType } from '../domain/webhook-message.js';
import { isoTime } from '../integrations/clock.js';

/** An ended call whose outcome may still become resolved: its step, and until when. */
export interface ResolveWatch {
  callId: string;
  step: string;
  until: number;
}

/** Where a ledger keeps calls, turns, consent entries and the messages it queues. */
export interface CallRows {
  /** The session's call not yet ended, the newest if several. */
  openCall(sessionId: string): CallRecord | undefined;
  call(callId: string): CallRecord | undefined;
  insertCall(record: CallRecord): void;
  saveCall(record: CallRecord): void;
  insertTurn(callId: string, turn: CallTurn): void;
  deleteTurns(callId: string): void;
  latestConsent(sessionId: string): ConsentDecision | undefined;
  insertConsent(entry: ConsentEntry): void;
  /** Opens (`until`) or closes (null) the window in which the call's outcome may become resolved. */
  setResolveUntil(call: CallRecord, until: number | null): void;
  /** The session's ended calls whose window was open when last looked at. */
  watches(sessionId: string): readonly ResolveWatch[];
  /** Marks the call as waiting for its model-written summary. */
  markSummaryPending(callId: string): void;
  /** Whether a `call.ended` of the call is held for its summary. */
  holdsMessage(callId: string): boolean;
  /** Queues `data` as a message of `type`; `held`: not sent until the call's summary is written. */
  enqueue(
    type: WebhookType,
    data: Record<string, unknown>,
    sessionId: string | null,
    at: number,
    held?: { callId: string },
  ): void;
  /** A new id, for a start that names none. */
  newId(): string;
}

export interface LedgerOptions {
  /**
   * A language model writes summaries (CALL_SUMMARY_MODEL_BASE_URL): a call's `call.ended` is held
   * until its summary is written or given up on, so the message carries it.
   */
  summaryModel?: boolean | undefined;
  /** CALL_RESOLVE_WINDOW_MINUTES, in ms: an ended call whose user moves past its step this long after it becomes resolved; 0 or absent, never. */
  resolveWindowMs?: number | undefined;
}

const stringList = (value: unknown, max: number): string[] =>
  Array.isArray(value) ? value.filter((code): code is string => typeof code === 'string').slice(0, max) : [];
const stringOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** Where the user was, as a session_start or session_stop item says. */
function placeOf(payload: Record<string, unknown>): CallPlace {
  return {
    screen: stringOrNull(payload.screen),
    step: stringOrNull(payload.step),
    errors: stringList(payload.errors, 20),
  };
}

const DECISIONS = new Set<string>(['given', 'refused', 'withdrawn']);

/** The events a ledger reads: the turns, a person asked for, nobody free for it, and the operator who joined (made by the service alone: OPERATOR_JOINED). */
const CALL_EVENTS = new Set(['voice_conversation_turn', 'handoff_requested', HANDOFF_UNANSWERED, OPERATOR_JOINED]);

/** The item kinds and events a ledger reads; any other item leaves the calls as they are (but see `movesOn`). */
export function concernsCalls(item: Pick<ActivityItem, 'kind' | 'payload'>): boolean {
  if (
    item.kind === 'session_start' ||
    item.kind === 'session_stop' ||
    item.kind === 'consent' ||
    item.kind === 'voice_agent_context_fetch'
  )
    return true;
  return item.kind === 'event' && CALL_EVENTS.has(String(item.payload.event));
}

/** An item that says where the user is: it may resolve an ended call whose window is open. */
export const movesOn = (item: Pick<ActivityItem, 'kind' | 'payload'>): boolean =>
  (item.kind === 'event' || item.kind === 'session_start') && typeof item.payload.screen === 'string';

export class CallLedger {
  constructor(
    private readonly rows: CallRows,
    private readonly options: LedgerOptions,
  ) {}

  /** What one committed activity item does to the calls. */
  record(item: ActivityItem, at: number): void {
    const sessionId = item.session_id;
    if (sessionId === null) return;
    const { payload } = item;
    if (movesOn(item)) this.movedOn(sessionId, payload, at);
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
        const call = this.rows.openCall(sessionId);
        if (
          version === null ||
          !call ||
          call.context_versions.includes(version) ||
          call.context_versions.length >= MAX_CONTEXT_VERSIONS
        )
          return;
        call.context_versions.push(version);
        this.rows.saveCall(call);
        return;
      }
      case 'event':
        if (payload.event === 'voice_conversation_turn') this.turn(sessionId, payload, at);
        else if (payload.event === 'handoff_requested') this.handoff(sessionId, item, at);
        else if (payload.event === HANDOFF_UNANSWERED) this.handoffUnanswered(sessionId, at);
        else if (payload.event === OPERATOR_JOINED) this.operatorJoined(sessionId, payload, at);
        return;
      default:
        return;
    }
  }

  private started(sessionId: string, item: ActivityItem, at: number): void {
    const open = this.rows.openCall(sessionId);
    if (open && item.payload.resumed === true) return;
    // A start that is not a resume begins a new call: one left open (a stop lost with its process) ends here.
    if (open) this.close(open, { screen: open.start.screen, step: open.start.step, errors: [] }, 'client', at);
    const callId = stringOrNull(item.payload.assistant_invocation_id) ?? this.rows.newId();
    if (this.rows.call(callId)) return;
    this.rows.insertCall({
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
      transcript_kept: keepsTranscript(this.rows.latestConsent(sessionId)),
      handoff: null,
      report: null,
    });
  }

  private ended(sessionId: string, payload: Record<string, unknown>, at: number): void {
    const call = this.rows.openCall(sessionId);
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
    // Not resolved yet: it becomes so if the user moves past the step within the window (docs/explanation/calls.md, "The report").
    const windowMs = this.options.resolveWindowMs ?? 0;
    if (windowMs > 0 && mayResolveLater(call) && call.start.step !== null) {
      call.report.outcome_open_until = isoTime(at + windowMs);
      this.rows.setResolveUntil(call, at + windowMs);
    }
    this.rows.saveCall(call);
    const { call_id, session_id, started_at, ended_at, ended_by, start, context_versions, transcript_kept, report } =
      call;
    const held = this.options.summaryModel ? { callId: call_id } : undefined;
    if (held) this.rows.markSummaryPending(call_id);
    const data = {
      call_id,
      session_id,
      started_at: isoTime(started_at),
      ended_at: isoTime(ended_at),
      ended_by,
      start,
      end,
      context_versions,
      transcript_kept,
      report,
    };
    this.rows.enqueue('call.ended', data, session_id, at, held);
  }

  /**
   * An item of a session that names where the user is: each ended call of the session still in
   * its window, whose step that is not, is resolved. The watch stays until its window closes (a
   * commit refused after this must not lose it); the call's own report says it is decided.
   */
  private movedOn(sessionId: string, payload: Record<string, unknown>, at: number): void {
    const watches = this.rows.watches(sessionId);
    const screen = stringOrNull(payload.screen);
    if (watches.length === 0 || screen === null) return;
    const step = windowScreen(screen);
    for (const watch of watches)
      if (at <= watch.until && step !== '' && step !== watch.step) this.resolveAfter(watch.callId, step, at);
  }

  private resolveAfter(callId: string, step: string, at: number): void {
    const call = this.rows.call(callId);
    if (!call?.report || !mayResolveLater(call) || call.report.outcome_open_until === null) return;
    const previous = call.report.outcome;
    call.report = resolvedAfterCall(call, call.report, step, isoTime(at));
    this.rows.saveCall(call);
    this.rows.setResolveUntil(call, null);
    // A call.ended still held for its summary carries the report as it stands when released;
    // one already due or sent is followed by this message.
    if (this.rows.holdsMessage(callId)) return;
    const { call_id, session_id, ended_at, report } = call;
    const data = {
      call_id,
      session_id,
      ended_at: ended_at === null ? null : isoTime(ended_at),
      previous_outcome: previous,
      report,
    };
    this.rows.enqueue('call.outcome_updated', data, session_id, at);
  }

  private turn(sessionId: string, payload: Record<string, unknown>, at: number): void {
    const call = this.rows.openCall(sessionId);
    if (!call) return;
    const role: TurnRole = payload.role === 'agent' ? 'agent' : 'user';
    const channel: TurnChannel = payload.channel === 'chat' ? 'chat' : 'voice';
    call.turns[role] += 1;
    const kept = keepsTranscript(this.rows.latestConsent(sessionId));
    call.transcript_kept = kept;
    this.rows.saveCall(call);
    // Without consent given, and after it is withdrawn, the words are not kept: only that a turn was said.
    if (!kept || typeof payload.text !== 'string') return;
    this.rows.insertTurn(call.call_id, {
      role,
      channel,
      text: turnText(payload.text),
      at,
      screen: stringOrNull(payload.screen),
    });
  }

  private handoff(sessionId: string, item: ActivityItem, at: number): void {
    const call = this.rows.openCall(sessionId);
    const reason = stringOrNull(item.payload.reason);
    const screen = stringOrNull(item.payload.screen);
    if (call && !call.handoff) {
      call.handoff = { at, reason, screen, joined: null };
      this.rows.saveCall(call);
    }
    const data = { session_id: sessionId, call_id: call?.call_id ?? null, reason, screen, requested_at: isoTime(at) };
    this.rows.enqueue('handoff.requested', data, sessionId, at);
  }

  /** The agent said nobody from the team was free: a call back is owed, announced as `handoff.unanswered` (docs/explanation/handoff.md). */
  private handoffUnanswered(sessionId: string, at: number): void {
    const call = this.rows.openCall(sessionId);
    if (!call?.handoff || call.handoff.joined || call.handoff.unanswered_at) return;
    call.handoff = { ...call.handoff, unanswered_at: at };
    this.rows.saveCall(call);
    const data = {
      session_id: sessionId,
      call_id: call.call_id,
      reason: call.handoff.reason,
      screen: call.handoff.screen ?? null,
      requested_at: isoTime(call.handoff.at),
      unanswered_at: isoTime(at),
    };
    this.rows.enqueue('handoff.unanswered', data, sessionId, at);
  }

  /** An operator joined the running call (POST /api/calls/{call_id}/join): it no longer waits for a person. */
  private operatorJoined(sessionId: string, payload: Record<string, unknown>, at: number): void {
    const call = this.rows.openCall(sessionId);
    const operator = stringOrNull(payload.operator);
    if (!call || operator === null || call.handoff?.joined) return;
    call.handoff = {
      ...(call.handoff ?? { at, reason: null, screen: stringOrNull(payload.screen) }),
      joined: { at, operator },
    };
    this.rows.saveCall(call);
  }

  private consented(sessionId: string, item: ActivityItem, at: number): void {
    const decision = String(item.payload.decision);
    if (!DECISIONS.has(decision)) return;
    const entry: ConsentEntry = {
      session_id: sessionId,
      user_id: item.user_id,
      decision: decision as ConsentDecision,
      notice_version: String((item.payload.notice_version as string | undefined) ?? ''),
      language: String((item.payload.language as string | undefined) ?? ''),
      at,
    };
    this.rows.insertConsent(entry);
    const call = this.rows.openCall(sessionId);
    if (call) {
      call.transcript_kept = keepsTranscript(entry.decision);
      this.rows.saveCall(call);
      // Withdrawn: what the running call kept goes too, not only what would come.
      if (entry.decision === 'withdrawn') this.rows.deleteTurns(call.call_id);
    }
    const { decision: given, notice_version, language } = entry;
    const data = {
      session_id: sessionId,
      call_id: call?.call_id ?? null,
      decision: given,
      notice_version,
      language,
      recorded_at: isoTime(at),
    };
    this.rows.enqueue('consent.recorded', data, sessionId, at);
  }
}
