import { heldCodes } from '../../domain/error-window.js';
import type { ComponentHint, ValidationFailure } from '../../domain/session-record.js';
import { retryCounts } from '../../domain/session-record.js';
import { isoTime } from '../../integrations/clock.js';
import type { SessionContext } from '../../machines/session/session-context.js';
import { isVoiceActive } from '../../machines/session/media-contract.js';
import type { ComponentHintView, SessionView, ValidationFailureView } from '../schemas/session.schema.js';

const iso = (ms: number | null): string | null => (ms === null ? null : isoTime(ms));

export const hintView = ({ bytes: _internal, ...hint }: ComponentHint): ComponentHintView => ({
  ...hint,
  updated_at: isoTime(hint.updated_at),
});

export const failureView = (failure: ValidationFailure | null): ValidationFailureView | null =>
  failure ? { ...failure, at: isoTime(failure.at) } : null;

/** The session record as the API shows it: ISO times, schemas summarised, nothing internal. */
export function sessionView(context: SessionContext, value: unknown): SessionView {
  return {
    session_id: context.session_id,
    user_id: context.user_id,
    client_id: context.client_id,
    active: isVoiceActive(value),
    state: value,
    screen: context.screen,
    screen_id: context.screen_id,
    latest_event: context.latest_event,
    last_validation_failure: failureView(context.last_validation_failure),
    component_hints: context.component_hints.map(hintView),
    retry_counts: { ...retryCounts(context) },
    schemas: Object.values(context.schemas).map(({ screen_id, schema_hash, critical }) => ({
      screen_id,
      schema_hash,
      critical,
    })),
    created_at: isoTime(context.created_at),
    updated_at: isoTime(context.updated_at),
    last_user_activity_at: iso(context.last_user_activity_at),
    last_trigger_at: iso(context.last_trigger_at),
    voice: { ...context.voice, started_at: iso(context.voice.started_at), stopped_at: iso(context.voice.stopped_at) },
    assistant_invocation_id: context.assistant_invocation_id,
    flow: context.flow,
    held_failures: {
      screen: context.errors.screen,
      codes: heldCodes(context.errors),
      restart_at: iso(context.errors.restart_at),
    },
    popup_cooldown_until: iso(context.popup_cooldown_until),
    dropoff: context.dropoff ? { ...context.dropoff, registered_at: isoTime(context.dropoff.registered_at) } : null,
  };
}
