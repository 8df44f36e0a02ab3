/** The catalogue of what the activity list records (docs/reference/events.md, plus the synthetic context fetch). */
export const ACTIVITY_KINDS = [
  'event',
  'trigger',
  'session_start',
  'session_stop',
  'reengagement',
  'schema_push',
  'voice_agent_context_fetch',
  // Whether the call's agent joined, was dispatched again, or left (docs/explanation/voice.md).
  'voice_agent',
  'popup_evaluate',
  'flow_graph_recorded',
  'dropoff_registered',
  'dropoff_cancelled',
  'consent',
] as const;

export type ActivityKind = (typeof ACTIVITY_KINDS)[number];

export interface Trace {
  trace_id: string;
  request_id: string;
}

/**
 * What a session actor emits; the activity log gives it an id and a timestamp string. `at` is
 * when it is recorded: a command's time, taken as it is delivered; a timer's item is stamped by
 * whoever records it (supervisor.ts, the cluster's session object) when it fires. The log keeps
 * times in id order (`RecordedTimes`).
 */
export interface ActivityDraft {
  kind: ActivityKind;
  at: number;
  /** Set by a timer's item: when the timer was due, which may be before `at` (it fired late). */
  due_at?: number;
  /** null for a trigger evaluation that named no session. */
  session_id: string | null;
  user_id: string | null;
  payload: Record<string, unknown>;
  trace: Trace;
}

export interface ActivityItem {
  id: string;
  kind: ActivityKind;
  timestamp: string;
  /** A timer's item: when the timer was due (ISO 8601); `timestamp` is when it was recorded. */
  due_at?: string;
  /** null for a trigger evaluation that named no session. */
  session_id: string | null;
  user_id: string | null;
  payload: Record<string, unknown>;
  trace: Trace;
}

/**
 * The item a draft becomes, its fields named rather than copied by rest and spread (a generic,
 * allocating copy per item; git show d1df1cf:docs/benchmark-history.md), in the order the list and the stream show them.
 */
export const activityItem = (id: string, timestamp: string, draft: ActivityDraft): ActivityItem =>
  draft.due_at === undefined
    ? {
        id,
        timestamp,
        kind: draft.kind,
        session_id: draft.session_id,
        user_id: draft.user_id,
        trace: draft.trace,
        payload: draft.payload,
      }
    : {
        id,
        timestamp,
        due_at: new Date(draft.due_at).toISOString(),
        kind: draft.kind,
        session_id: draft.session_id,
        user_id: draft.user_id,
        trace: draft.trace,
        payload: draft.payload,
      };

/**
 * The times a log gives its items, in id order: each item's own time, or the last one given when
 * that is later, so times never go backwards along the ids (a clock stepped back, or an item
 * stamped before one recorded ahead of it in the same turn). Whole milliseconds, as the ISO
 * timestamp reads.
 */
export class RecordedTimes {
  constructor(private last = Number.NEGATIVE_INFINITY) {}

  next(at: number): number {
    const time = Math.max(Math.trunc(at), this.last);
    this.last = time;
    return time;
  }
}
