/**
 * The ingest step: what one SDK event does to a session. The machine's `ingest` action and the
 * direct path that skips XState's macrostep (direct-ingest.ts) both run this one function.
 */
import type { ActivityKind } from '../../domain/activity.js';
import { CONTEXT_PUSH_EVENTS } from '../../domain/agent-notice.js';
import { afterEvent } from '../../domain/error-window.js';
import { AGENT_EVENT_TYPES } from '../../domain/sdk-event.js';
import { eventActivityPayload, eventPatch } from '../../domain/session-event.js';
import type { SessionContext } from './session-context.js';
import { currentRoom } from './session-context.js';
import type { IngestResult, SessionCommand, SessionEmitted } from './machine-events.js';

export type SessionIngest = Extract<SessionCommand, { type: 'session.ingest' }>;

/** What an SDK event does to a session: its next context, what it emits, and the answer. */
export interface IngestStep {
  context: SessionContext;
  emitted: Extract<SessionEmitted, { type: 'activity' | 'agent.notice' }>[];
  /** The event came from the user, not agent telemetry: an armed reengagement timer restarts. */
  userActivity: boolean;
  result: IngestResult;
}

/** Ingestion in the session (docs/reference/events.md): the event applied, the error window moved on, the activity items. */
export function ingestStep(context: SessionContext, event: SessionIngest): IngestStep {
  const outcome = eventPatch(context, event.event, {
    at: event.at,
    schemaRegistry: context.settings.schemaRegistry,
    matchHint: event.matchHint,
    maxBytes: context.settings.sessionMaxBytes,
    sizes: event.sizes,
  });
  const userActivity = !AGENT_EVENT_TYPES.has(outcome.stored.event);
  // The user coming back cancels a registered drop-off.
  const returned = userActivity && context.dropoff !== null;
  // One copy of the context with the event's fields; a patch of only those fields measured
  // worse: XState's assign merges it into its own copy on a slow path (git show d1df1cf:docs/benchmark-history.md, `eventPatch`).
  const next: SessionContext = {
    ...context,
    ...outcome.patch,
    last_touched_at: event.at,
    errors: afterEvent(context.errors, outcome.stored, outcome.patch.screen, event.at, event.channel),
  };
  // The agent's telemetry is a sign the call is alive.
  if (!userActivity && context.voice_silence) next.voice_silence = { ...context.voice_silence, alive_at: event.at };
  if (returned) next.dropoff = null;
  const item = (kind: ActivityKind, payload: Record<string, unknown>): IngestStep['emitted'][number] => ({
    type: 'activity',
    draft: {
      at: event.at,
      session_id: context.session_id,
      user_id: outcome.patch.user_id,
      trace: event.trace,
      kind,
      payload,
    },
  });
  const payload = eventActivityPayload(outcome.stored, outcome.warnings, event.channel);
  // A turn names no screen of its own: it was said where the user is.
  if (payload.role !== undefined && payload.screen === null) payload.screen = next.screen;
  const emitted = [item('event', payload)];
  if (returned) emitted.push(item('dropoff_cancelled', { by: 'user_returned' }));
  if (outcome.schemaPush) emitted.push(item('schema_push', { ...outcome.schemaPush }));
  // While a call runs, what the user types or fails on is what the agent should hear of now,
  // not at its next refresh (docs/decisions/0006-the-voice-agents-context.md). Placeholder media has no room to tell.
  if (context.settings.mediaReady && context.voice_silence && CONTEXT_PUSH_EVENTS.has(outcome.stored.event)) {
    emitted.push({
      type: 'agent.notice',
      room: currentRoom(context),
      notice: { type: 'context_updated', session_id: context.session_id, reason: outcome.stored.event, at: event.at },
    });
  }
  return { context: next, emitted, userActivity, result: { ingested_at_ms: event.at, warnings: outcome.warnings } };
}
