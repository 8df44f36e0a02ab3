import type { Trace } from '../domain/activity.js';
import type { IngestChannel } from '../domain/error-window.js';
import type { IngestInput } from '../domain/event-redaction.js';
import { jsonStringSize } from '../domain/json-size.js';
import type { IngestResult } from '../machines/session/events.js';
import type { SessionHost } from './session-host.js';
import type { AskResult } from './session-host.js';

/**
 * The one way an SDK event reaches its session, whatever carried it (HTTP `POST /v1/events`, a
 * WebSocket `control_state` frame): anything done to every event on arrival belongs here. The
 * event is already validated (EventInSchema), redacted (`redactForIngest`, so the type admits no
 * raw event) and `sessionKey` resolved (session-key.ts).
 */
export function ingestSdkEvent(supervisor: SessionHost, sessionKey: string, input: IngestInput, trace: Trace, channel?: IngestChannel): Promise<AskResult<IngestResult>> {
  const { event, matchHint } = input;
  if (event.session_id === sessionKey) return supervisor.ask<IngestResult>(sessionKey, 'create', (reply, at) => ({ type: 'session.ingest', event, matchHint, at, trace, reply, sizes: input.sizes, channel }));
  const stored = { ...event, session_id: sessionKey };
  // The routing key replaced: the event's size moves by the difference.
  const sizes = { ...input.sizes, bytes: input.sizes.bytes + jsonStringSize(sessionKey) - jsonStringSize(event.session_id) };
  return supervisor.ask<IngestResult>(sessionKey, 'create', (reply, at) => ({ type: 'session.ingest', event: stored, matchHint, at, trace, reply, sizes, channel }));
}
