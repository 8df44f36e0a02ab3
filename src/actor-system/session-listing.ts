import { normaliseStepId } from '../domain/step-id.js';
import type { SessionContext } from '../machines/session/session-context.js';
import type { SummaryQuery, SummaryRow, SummarySelection } from '../store/ports.js';

/**
 * `GET /api/sessions` and the console depend on these types and on `SessionSupervisor.list` only,
 * so where sessions are held (in memory now, a store for hibernated ones later) can change behind them.
 */
export const SESSION_SORTS = ['last_activity', 'session_id'] as const;
export type SessionSort = (typeof SESSION_SORTS)[number];

export interface SessionListQuery {
  /** At most this many summaries in the page. */
  limit: number;
  /** From a previous page's `next_cursor`: the page continues after that session. */
  cursor?: string | undefined;
  /** `active`: voice starting, active or stopping; `inactive`: none. */
  voice?: 'active' | 'inactive' | undefined;
  /** Exact screen, case-insensitive. */
  screen?: string | undefined;
  /** Case-insensitive substring of the session id, the user id or the screen. */
  q?: string | undefined;
  sort: SessionSort;
  order: 'asc' | 'desc';
}

/** How far a user is through the flow the SDK set (`POST /v1/flows/set`), as that endpoint reports progress. */
export interface FlowProgress {
  flow_key: string;
  current_step: string | null;
  /** 1-based place of the current step in the sequence; null when the step is not in it. */
  position: number | null;
  total: number;
  percent: number | null;
}

export interface SessionSummary {
  session_id: string;
  user_id: string | null;
  screen: string | null;
  flow: FlowProgress | null;
  /** The voice region's state: `inactive`, `starting`, `active` or `stopping`. */
  voice: string;
  /** Until the trigger may fire again; 0 when not cooling down. */
  cooldown_remaining_ms: number;
  /** When a command last reached the session (epoch ms). */
  last_activity_at: number;
  status: 'running' | 'hibernated';
}

export interface SessionPage {
  sessions: SessionSummary[];
  /** Pass as `cursor` for the next page; null on the last one. */
  next_cursor: string | null;
  /** How many sessions match the filters, over every page. */
  total: number;
}

/**
 * The flow progress of a session (`flow` as `/v1/flows/set` keeps it: its key and normalised
 * steps) at its current screen; null for a session with none. Read only for the sessions of a page.
 */
export function flowProgressOf(context: Pick<SessionContext, 'flow' | 'screen'>): FlowProgress | null {
  const { flow } = context;
  if (!flow) return null;
  const current = context.screen === null ? null : normaliseStepId(context.screen);
  const index = current === null ? -1 : flow.steps.indexOf(current);
  const position = index < 0 ? null : index + 1;
  const total = flow.steps.length;
  return {
    flow_key: flow.flow_key,
    current_step: current,
    position,
    total,
    percent: position === null || total === 0 ? null : Math.round((position * 100) / total),
  };
}

export function summarise(row: SummaryRow, running: boolean, now: number, flow: FlowProgress | null): SessionSummary {
  return {
    session_id: row.session_id,
    user_id: row.user_id,
    screen: row.screen,
    flow,
    voice: row.voice,
    cooldown_remaining_ms: row.cooldown_until === null ? 0 : Math.max(0, row.cooldown_until - now),
    last_activity_at: row.last_activity_at,
    status: running ? 'running' : 'hibernated',
  };
}

/**
 * A cursor is the position of the last session on the page, so a page holds whatever came or went
 * before it: its last activity (epoch ms) and its id, `<ms>~<session id>`. Every text of that form
 * is a position in either sort order, so the document's pattern says exactly which cursors are
 * taken (a made-up one continues after the position it names).
 */
export const CURSOR_PATTERN = /^(\d{1,15})~([A-Za-z0-9._:-]{1,128})$/;

function encodeCursor(row: SummaryRow): string {
  return `${row.last_activity_at}~${row.session_id}`;
}

function decodeCursor(cursor: string, sort: SessionSort): SummaryQuery['after'] {
  const match = CURSOR_PATTERN.exec(cursor);
  if (!match) return undefined;
  const [, time, id] = match as unknown as [string, string, string];
  return { primary: sort === 'last_activity' ? Number(time) : id, id };
}

export class InvalidCursorError extends Error {}

/** What a page needs from where sessions are held: the store's selection, and what only the running actors know. */
export interface SessionSource {
  select(query: SummaryQuery): SummarySelection;
  isRunning(sessionId: string): boolean;
  flowOf(sessionId: string): FlowProgress | null;
}

/** One page of the sessions held, filtered and sorted by the store; the flow is read for the page's sessions only. */
export function pageOfSessions(source: SessionSource, query: SessionListQuery, now: number): SessionPage {
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, query.sort);
  if (query.cursor !== undefined && after === undefined)
    throw new InvalidCursorError('cursor is not one this endpoint gave');
  const selection = source.select({
    limit: query.limit,
    sort: query.sort,
    order: query.order,
    after,
    voice: query.voice,
    screen: query.screen?.toLowerCase(),
    q: query.q?.toLowerCase(),
  });
  const last = selection.rows.at(-1);
  return {
    sessions: selection.rows.map((row) =>
      summarise(row, source.isRunning(row.session_id), now, source.flowOf(row.session_id)),
    ),
    next_cursor: selection.more && last ? encodeCursor(last) : null,
    total: selection.total,
  };
}
