import { normaliseStepId } from '../domain/step-id.js';
import type { SessionContext } from '../machines/session.machine.js';

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
 * One held session as the store's summary row has it (running sessions are saved on every change,
 * so it is current), and whether it runs as an actor now. Listing reads these, never whole contexts.
 */
export interface ListedSession {
  session_id: string;
  user_id: string | null;
  screen: string | null;
  voice: string;
  cooldown_until: number | null;
  last_activity_at: number;
  running: boolean;
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
  return { flow_key: flow.flow_key, current_step: current, position, total, percent: position === null || total === 0 ? null : Math.round((position * 100) / total) };
}

export function summarise(listed: ListedSession, now: number, flow: FlowProgress | null): SessionSummary {
  return {
    session_id: listed.session_id,
    user_id: listed.user_id,
    screen: listed.screen,
    flow,
    voice: listed.voice,
    cooldown_remaining_ms: listed.cooldown_until === null ? 0 : Math.max(0, listed.cooldown_until - now),
    last_activity_at: listed.last_activity_at,
    status: listed.running ? 'running' : 'hibernated',
  };
}

/** Where a session stands in the sort: its sort value, then its id to break ties. */
interface Position {
  primary: number | string;
  id: string;
}

const primaryOf = (listed: ListedSession, sort: SessionSort): number | string => (sort === 'last_activity' ? listed.last_activity_at : listed.session_id);

/** A session against a position, without building one: the walk over every session allocates nothing. */
function compareTo(listed: ListedSession, sort: SessionSort, position: Position): number {
  const primary = primaryOf(listed, sort);
  if (primary !== position.primary) return primary < position.primary ? -1 : 1;
  const id = listed.session_id;
  return id === position.id ? 0 : id < position.id ? -1 : 1;
}

/** The cursor is the position of the last session on the page, so a page holds whatever came or went before it. */
function encodeCursor(position: Position): string {
  return Buffer.from(JSON.stringify([position.primary, position.id])).toString('base64url');
}

function decodeCursor(cursor: string, sort: SessionSort): Position | undefined {
  try {
    const key: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(key) || key.length !== 2 || typeof key[1] !== 'string') return undefined;
    const primary: unknown = key[0];
    if (sort === 'last_activity' ? typeof primary !== 'number' : typeof primary !== 'string') return undefined;
    return { primary: primary as number | string, id: key[1] };
  } catch {
    return undefined;
  }
}

export class InvalidCursorError extends Error {}

const includes = (text: string | null, needle: string): boolean => text !== null && text.toLowerCase().includes(needle);

function matches(listed: ListedSession, query: SessionListQuery, needle: string | undefined, screen: string | undefined): boolean {
  if (query.voice !== undefined && (listed.voice !== 'inactive') !== (query.voice === 'active')) return false;
  if (screen !== undefined && listed.screen?.toLowerCase() !== screen) return false;
  if (needle !== undefined && !includes(listed.session_id, needle) && !includes(listed.user_id, needle) && !includes(listed.screen, needle)) return false;
  return true;
}

/**
 * One page of the sessions held, filtered and sorted. A single pass keeps the page's worth of best
 * keys after the cursor (binary insertion into a sorted array of at most `limit`), so a page of 100,000
 * sessions costs one walk, not a sort of them all.
 */
export function pageOfSessions(
  held: Iterable<ListedSession>,
  query: SessionListQuery,
  now: number,
  flowOf: (sessionId: string) => FlowProgress | null,
): SessionPage {
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, query.sort);
  if (query.cursor !== undefined && after === undefined) throw new InvalidCursorError('cursor is not one this endpoint gave');
  const direction = query.order === 'asc' ? 1 : -1;
  const needle = query.q?.toLowerCase();
  const screen = query.screen?.toLowerCase();
  const { sort } = query;
  const best: { position: Position; held: ListedSession }[] = [];
  let total = 0;
  let afterCursor = 0;
  for (const session of held) {
    if (!matches(session, query, needle, screen)) continue;
    total += 1;
    if (after !== undefined && compareTo(session, sort, after) * direction <= 0) continue;
    afterCursor += 1;
    if (best.length === query.limit && compareTo(session, sort, best[best.length - 1]!.position) * direction >= 0) continue;
    let low = 0;
    let high = best.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (compareTo(session, sort, best[middle]!.position) * direction < 0) high = middle;
      else low = middle + 1;
    }
    best.splice(low, 0, { position: { primary: primaryOf(session, sort), id: session.session_id }, held: session });
    if (best.length > query.limit) best.pop();
  }
  const last = best[best.length - 1];
  const more = last !== undefined && afterCursor > best.length;
  return {
    sessions: best.map((entry) => summarise(entry.held, now, flowOf(entry.held.session_id))),
    next_cursor: more && last ? encodeCursor(last.position) : null,
    total,
  };
}
