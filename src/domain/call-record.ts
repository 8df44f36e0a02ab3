/**
 * A call: one voice session from its start to its stop (docs/explanation/calls.md). Its record is built from
 * the activity items the session commits, its report written when it ends. Pure: no clock, no
 * storage; texts reaching here were masked on arrival (docs/decisions/0001-identity-values-masked-on-arrival.md).
 */

export type TurnRole = 'user' | 'agent';
export type TurnChannel = 'voice' | 'chat';

/** One turn of the transcript, its text as the privacy rule left it. */
export interface CallTurn {
  role: TurnRole;
  channel: TurnChannel;
  text: string;
  /** Epoch ms. */
  at: number;
  /** The session's screen when the turn was said. */
  screen: string | null;
}

/** How a call ended: a client's stop, or the silence timeout. */
/** Who or what ended a call: the client's stop, or the session's own end (docs/explanation/calls.md). */
export const ENDED_BY = ['client', 'silence', 'no_agent', 'media_lost'] as const;
export type EndedBy = (typeof ENDED_BY)[number];

export type CallOutcome = 'resolved' | 'handoff' | 'abandoned' | 'unresolved';

/** Why the outcome is what it is, one code each; `moved_past_step_after_call`: within CALL_RESOLVE_WINDOW_MINUTES of its end. */
export type OutcomeReason =
  'moved_past_step' | 'moved_past_step_after_call' | 'handoff_requested' | 'no_user_turn' | 'still_on_step';

/** Where the user was at one end of the call. */
export interface CallPlace {
  screen: string | null;
  /** The screen as a step id (normalised: trimmed, lower case, legacy prefix dropped). */
  step: string | null;
  /** The error codes held for that step, first code of each failure. */
  errors: string[];
}

export interface CallReport {
  duration_ms: number;
  turns: { user: number; agent: number };
  outcome: CallOutcome;
  /** The step the call was about: where the user was when it started. */
  step: string | null;
  reason: OutcomeReason;
  summary: string;
  /** `record`: composed from the record; `model`: written by the configured language model from the masked transcript. */
  summary_source: 'record' | 'model';
  /**
   * ISO 8601: until when the outcome may still become `resolved`, the user moving past the step
   * after the call (CALL_RESOLVE_WINDOW_MINUTES, docs/explanation/calls.md); null when it can no longer change.
   */
  outcome_open_until: string | null;
  /** ISO 8601: when the user moved past the step after the call; null otherwise. */
  resolved_at: string | null;
}

/** What a call holds besides its transcript. */
export interface CallRecord {
  call_id: string;
  session_id: string;
  user_id: string | null;
  started_at: number;
  ended_at: number | null;
  ended_by: EndedBy | null;
  start: CallPlace;
  end: CallPlace | null;
  /** The versions of the agent's context read during the call, in the order first read. */
  context_versions: string[];
  /** Turns said, kept or not. */
  turns: { user: number; agent: number };
  /** Whether the transcript is kept: consent given, not withdrawn since. */
  transcript_kept: boolean;
  /** A person was asked for (`handoff_requested`), and whether one joined (docs/explanation/handoff.md). */
  handoff: CallHandoff | null;
  report: CallReport | null;
}

export interface CallHandoff {
  at: number;
  reason: string | null;
  /** The screen the request was made on; absent in records kept before it was. */
  screen?: string | null;
  /** The operator who joined the call, and when; null while the user waits (absent in older records). */
  joined?: { at: number; operator: string } | null;
  /** When the agent said nobody from the team was free (`handoff_unanswered`): a call back is owed. Absent while it has not. */
  unanswered_at?: number;
}

/** Whether a call waits for a person: one was asked for, none has joined, and it runs. */
export const waitsForPerson = (record: Pick<CallRecord, 'handoff' | 'ended_at'>): boolean =>
  record.ended_at === null && record.handoff !== null && !record.handoff.joined;

export type ConsentDecision = 'given' | 'refused' | 'withdrawn';

/** One entry of a session's consent record; entries are only ever added. */
export interface ConsentEntry {
  session_id: string;
  user_id: string | null;
  decision: ConsentDecision;
  notice_version: string;
  language: string;
  at: number;
}

/** The place of a session: its screen, the screen as a step id, and the codes held for that step. */
export function placeOfSession(
  screen: string | null,
  window: { screen: string; failures: readonly { codes: readonly string[] }[] },
  step: (screen: string) => string,
): CallPlace {
  const stepId = screen ? step(screen) : null;
  return {
    screen,
    step: stepId,
    errors: stepId !== null && window.screen === stepId ? window.failures.map((failure) => failure.codes[0] ?? '') : [],
  };
}

/** The longest turn text kept: a turn is a sentence or a few, not a document. */
export const MAX_TURN_TEXT_CHARS = 2_000;
/** Context versions a call lists; a call re-reads its context every minute or so. */
export const MAX_CONTEXT_VERSIONS = 50;

/** A turn's text as kept: well-formed, at most MAX_TURN_TEXT_CHARS, marked where cut. */
export function turnText(text: string): string {
  return text.length > MAX_TURN_TEXT_CHARS
    ? `${text.slice(0, MAX_TURN_TEXT_CHARS - 1).toWellFormed()}…`
    : text.toWellFormed();
}

/**
 * The outcome of a call as its record stands at the end: a handoff asked for is a handoff; a call
 * in which the user never said a word is abandoned; a user who left the step the call began on is
 * resolved; anything else is unresolved.
 */
export function callOutcome(
  record: Pick<CallRecord, 'handoff' | 'start' | 'end'>,
  userTurns: number,
): { outcome: CallOutcome; reason: OutcomeReason } {
  if (record.handoff) return { outcome: 'handoff', reason: 'handoff_requested' };
  const movedOn = record.end !== null && record.end.step !== null && record.end.step !== record.start.step;
  if (movedOn) return { outcome: 'resolved', reason: 'moved_past_step' };
  if (userTurns === 0) return { outcome: 'abandoned', reason: 'no_user_turn' };
  return { outcome: 'unresolved', reason: 'still_on_step' };
}

const durationWords = (ms: number): string => {
  const seconds = Math.max(0, Math.round(ms / 1000));
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
};

const OUTCOME_WORDS: Record<OutcomeReason, string> = {
  moved_past_step: 'The user moved past the step.',
  moved_past_step_after_call: 'The user moved past the step after the call.',
  handoff_requested: 'A handoff to a person was asked for.',
  no_user_turn: 'The user said nothing.',
  still_on_step: 'The user was still on the step when the call ended.',
};

type ReportFacts = Pick<CallReport, 'duration_ms' | 'turns' | 'outcome' | 'step' | 'reason'>;

/** The summary composed from the record alone: no text of the transcript, only its facts. `nowOn`: the step the user moved to after the call. */
export function recordSummary(record: CallRecord, report: ReportFacts, nowOn?: string): string {
  const parts = [`Call of ${durationWords(report.duration_ms)}`];
  parts[0] += record.start.step ? ` on step ${record.start.step}` : ' with no screen known';
  if (record.start.errors.length > 0) parts[0] += ` (errors: ${record.start.errors.join(', ')})`;
  parts[0] += '.';
  parts.push(`${report.turns.user} user and ${report.turns.agent} agent turns.`);
  parts.push(OUTCOME_WORDS[report.reason]);
  const now = nowOn ?? (report.outcome === 'resolved' ? record.end?.step : undefined);
  if (now) parts.push(`Now on ${now}.`);
  if (record.handoff?.reason) parts.push(`Handoff reason: ${record.handoff.reason}.`);
  if (record.ended_by === 'silence') parts.push('The call ended after a silence.');
  if (record.ended_by === 'no_agent') parts.push('No agent joined the call.');
  if (record.ended_by === 'media_lost') parts.push('The media server lost the call.');
  return parts.join(' ');
}

/** The report of a call that has just ended. */
export function callReport(record: CallRecord): CallReport {
  const { turns } = record;
  const { outcome, reason } = callOutcome(record, turns.user);
  const base = {
    duration_ms: Math.max(0, (record.ended_at ?? record.started_at) - record.started_at),
    turns: { ...turns },
    outcome,
    step: record.start.step,
    reason,
  };
  return {
    ...base,
    summary: recordSummary(record, base),
    summary_source: 'record',
    outcome_open_until: null,
    resolved_at: null,
  };
}

/** Whether an ended call's outcome can still become `resolved` by the user moving past its step after it. */
export const mayResolveLater = (record: CallRecord): boolean =>
  record.report !== null &&
  record.start.step !== null &&
  (record.report.outcome === 'unresolved' || record.report.outcome === 'abandoned');

/**
 * The report of an ended call whose user moved past its step (to `movedTo`) at `resolvedAt`, within
 * CALL_RESOLVE_WINDOW_MINUTES of its end: resolved. A summary composed from the record is composed
 * again; a model's gets the fact added, since the model wrote it before.
 */
export function resolvedAfterCall(
  record: CallRecord,
  report: CallReport,
  movedTo: string,
  resolvedAt: string,
): CallReport {
  const facts: ReportFacts = {
    duration_ms: report.duration_ms,
    turns: report.turns,
    outcome: 'resolved',
    step: report.step,
    reason: 'moved_past_step_after_call',
  };
  const summary =
    report.summary_source === 'record'
      ? recordSummary(record, facts, movedTo)
      : `${report.summary} ${OUTCOME_WORDS.moved_past_step_after_call} Now on ${movedTo}.`;
  return { ...report, ...facts, summary, outcome_open_until: null, resolved_at: resolvedAt };
}

/** The last decision of a consent record decides: only `given` keeps a transcript. */
export const keepsTranscript = (decision: ConsentDecision | undefined): boolean => decision === 'given';
