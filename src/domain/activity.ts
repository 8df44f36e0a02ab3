/** The catalogue of what the activity list records (spec 6.2, plus the synthetic context fetch). */
export const ACTIVITY_KINDS = [
  'event',
  'trigger',
  'session_start',
  'session_stop',
  'reengagement',
  'schema_push',
  'voice_agent_context_fetch',
  'popup_evaluate',
  'flow_graph_recorded',
  'dropoff_registered',
  'dropoff_cancelled',
] as const;

export type ActivityKind = (typeof ACTIVITY_KINDS)[number];

export interface Trace {
  trace_id: string;
  request_id: string;
}

/** What a session actor emits; the activity log gives it an id and a timestamp string. */
export interface ActivityDraft {
  kind: ActivityKind;
  at: number;
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
  /** null for a trigger evaluation that named no session. */
  session_id: string | null;
  user_id: string | null;
  payload: Record<string, unknown>;
  trace: Trace;
}

/**
 * The item a draft becomes, its fields named rather than copied by rest and spread (a generic,
 * allocating copy per item; BENCHMARKS.md), in the order the list and the stream show them.
 */
export const activityItem = (id: string, timestamp: string, draft: ActivityDraft): ActivityItem => ({
  id,
  timestamp,
  kind: draft.kind,
  session_id: draft.session_id,
  user_id: draft.user_id,
  trace: draft.trace,
  payload: draft.payload,
});
