import type { Trace } from '../domain/activity.js';
import type { IngestChannel } from '../domain/error-window.js';
import type { IngestInput } from '../domain/event-redaction.js';
import { jsonStringSize } from '../domain/json-size.js';
import type { IngestResult } from '../machines/session/machine-events.js';
import type { SessionHost } from '../actor-system/session-host.js';
import type { AskResult } from '../actor-system/session-host.js';

/**
 * The one way an SDK event reaches its session, whatever carried it (HTTP `POST /v1/events`, a
 * WebSocket `control_state` frame): anything done to every event on arrival belongs here. The
 * event is already validated (EventInSchema), redacted (`redactForIngest`, so the type admits no
 * raw event) and `sessionKey` resolved (session-key.ts). `requestId` is the id the client gave the
 * request (Idempotency-Key, X-Request-ID, a frame's message_id), if any.
 */
export function ingestSdkEvent(
  sessionHost: SessionHost,
  sessionKey: string,
  input: IngestInput,
  trace: Trace,
  channel?: IngestChannel,
  requestId?: string,
): Promise<AskResult<IngestResult>> {
  const { event, matchHint } = input;
  const stored = event.session_id === sessionKey ? event : { ...event, session_id: sessionKey };
  // The routing key replaced: the event's size moves by the difference.
  const sizes =
    stored === event
      ? input.sizes
      : { ...input.sizes, bytes: input.sizes.bytes + jsonStringSize(sessionKey) - jsonStringSize(event.session_id) };
  return sessionHost.ingest(
    sessionKey,
    (reply, at) => ({ type: 'session.ingest', event: stored, matchHint, at, trace, reply, sizes, channel }),
    requestId || undefined,
  );
}
