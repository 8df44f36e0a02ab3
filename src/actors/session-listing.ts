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

/** One held session as the supervisor sees it: its context, and its state value when running. */
export interface HeldSession {
  context: SessionContext;
  /** The machine's state value; undefined for a hibernated session. */
  value: unknown;
}

/**
 * The flow progress of a session whose context carries a flow as `/v1/flows/set` gives it
 * (`flow_key`, `step_sequence`, `current_step`); null for a session with none. The one place that
 * reads it, for when sessions hold flows.
 */
export function flowProgressOf(context: SessionContext): FlowProgress | null {
  const flow = (context as SessionContext & { flow?: unknown }).flow;
  if (flow === null || typeof flow !== 'object') return null;
  const { flow_key, step_sequence, current_step } = flow as Record<string, unknown>;
  if (typeof flow_key !== 'string') return null;
  const steps = Array.isArray(step_sequence) ? step_sequence : [];
  const current = typeof current_step === 'string' ? current_step : null;
  const index = current === null ? -1 : steps.indexOf(current);
  const position = index < 0 ? null : index + 1;
  return { flow_key, current_step: current, position, total: steps.length, percent: position === null || steps.length === 0 ? null : Math.round((position * 100) / steps.length) };
}

export function summarise(held: HeldSession, now: number): SessionSummary {
  const { context, value } = held;
  const voice = (value as { voice?: unknown } | undefined)?.voice;
  const cooldownUntil = context.trigger.cooldown_until;
  return {
    session_id: context.session_id,
    user_id: context.user_id,
    screen: context.screen,
    flow: flowProgressOf(context),
    voice: typeof voice === 'string' ? voice : typeof voice === 'object' && voice !== null ? Object.keys(voice)[0]! : 'inactive',
    cooldown_remaining_ms: cooldownUntil === null ? 0 : Math.max(0, cooldownUntil - now),
    last_activity_at: context.last_touched_at,
    status: value === undefined ? 'hibernated' : 'running',
  };
}

/** Where a session stands in the sort: its sort value, then its id to break ties. */
interface Position {
  primary: number | string;
  id: string;
}

const primaryOf = (context: SessionContext, sort: SessionSort): number | string => (sort === 'last_activity' ? context.last_touched_at : context.session_id);

/** A session against a position, without building one: the walk over every session allocates nothing. */
function compareTo(context: SessionContext, sort: SessionSort, position: Position): number {
  const primary = primaryOf(context, sort);
  if (primary !== position.primary) return primary < position.primary ? -1 : 1;
  const id = context.session_id;
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

function matches(held: HeldSession, query: SessionListQuery, needle: string | undefined, screen: string | undefined): boolean {
  const { context } = held;
  if (query.voice !== undefined) {
    const voice = (held.value as { voice?: unknown } | undefined)?.voice;
    const active = voice !== undefined && voice !== 'inactive';
    if (active !== (query.voice === 'active')) return false;
  }
  if (screen !== undefined && context.screen?.toLowerCase() !== screen) return false;
  if (needle !== undefined && !includes(context.session_id, needle) && !includes(context.user_id, needle) && !includes(context.screen, needle)) return false;
  return true;
}

/**
 * One page of the sessions held, filtered and sorted. A single pass keeps the page's worth of best
 * keys after the cursor (binary insertion into a sorted array of at most `limit`), so a page of 100,000
 * sessions costs one walk, not a sort of them all.
 */
export function pageOfSessions(held: Iterable<HeldSession>, query: SessionListQuery, now: number): SessionPage {
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, query.sort);
  if (query.cursor !== undefined && after === undefined) throw new InvalidCursorError('cursor is not one this endpoint gave');
  const direction = query.order === 'asc' ? 1 : -1;
  const needle = query.q?.toLowerCase();
  const screen = query.screen?.toLowerCase();
  const { sort } = query;
  const best: { position: Position; held: HeldSession }[] = [];
  let total = 0;
  let afterCursor = 0;
  for (const session of held) {
    if (!matches(session, query, needle, screen)) continue;
    total += 1;
    const { context } = session;
    if (after !== undefined && compareTo(context, sort, after) * direction <= 0) continue;
    afterCursor += 1;
    if (best.length === query.limit && compareTo(context, sort, best[best.length - 1]!.position) * direction >= 0) continue;
    let low = 0;
    let high = best.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (compareTo(context, sort, best[middle]!.position) * direction < 0) high = middle;
      else low = middle + 1;
    }
    best.splice(low, 0, { position: { primary: primaryOf(context, sort), id: context.session_id }, held: session });
    if (best.length > query.limit) best.pop();
  }
  const last = best[best.length - 1];
  const more = last !== undefined && afterCursor > best.length;
  return {
    sessions: best.map((entry) => summarise(entry.held, now)),
    next_cursor: more && last ? encodeCursor(last.position) : null,
    total,
  };
}
