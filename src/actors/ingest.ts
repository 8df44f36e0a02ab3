import type { Trace } from '../domain/activity.js';
import type { SdkEvent } from '../domain/sdk-event.js';
import type { IngestResult } from '../machines/session.events.js';
import type { AskResult, SessionSupervisor } from './supervisor.js';

/**
 * The one way an SDK event reaches its session, whatever carried it (HTTP `POST /v1/events`, a
 * WebSocket `control_state` frame): anything done to every event on arrival belongs here. The
 * event is already validated (EventInSchema) and `sessionKey` resolved (session-key.ts).
 */
export function ingestSdkEvent(supervisor: SessionSupervisor, sessionKey: string, event: SdkEvent, trace: Trace): Promise<AskResult<IngestResult>> {
  const stored = event.session_id === sessionKey ? event : { ...event, session_id: sessionKey };
  return supervisor.ask<IngestResult>(sessionKey, 'create', (reply, at) => ({ type: 'session.ingest', event: stored, at, trace, reply }));
}
