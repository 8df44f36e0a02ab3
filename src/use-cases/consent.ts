/**
 * The consent use case: an entry of a session's consent record (docs/explanation/calls.md). The session
 * records it as a `consent` activity item; the store keeps the entry, append-only, in the commit
 * of that item.
 */
import type { AskResult, SessionHost } from '../actor-system/session-host.js';
import type { ConsentRecordCommand, ConsentRecorded } from '../machines/session/machine-events.js';

export type RecordConsent = Pick<ConsentRecordCommand, 'decision' | 'notice_version' | 'language' | 'trace'>;

/** Records consent on an existing session: consent is asked during a call, so the session is there. */
export function recordConsent(
  host: SessionHost,
  sessionKey: string,
  consent: RecordConsent,
): Promise<AskResult<ConsentRecorded>> {
  return host.ask<ConsentRecorded>(sessionKey, 'existing', (reply, at) => ({
    type: 'consent.record',
    ...consent,
    at,
    reply,
  }));
}
