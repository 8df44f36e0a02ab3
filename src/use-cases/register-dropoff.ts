/**
 * The drop-off use cases: register that a user left mid-journey (arming the reengagement timer),
 * and cancel it. The phone number never gets here: transport reduces it to the facts the session
 * keeps before calling.
 */
import type { AskResult, SessionHost } from '../actor-system/session-host.js';
import type { DropoffCancelCommand, DropoffRegisterCommand } from '../machines/session/machine-events.js';

/** What a registration carries besides the time and the reply. */
export type RegisterDropoff = Omit<DropoffRegisterCommand, 'type' | 'at' | 'reply'>;

/** Registers a drop-off on the session, making it if it is new. */
export function registerDropoff(
  host: SessionHost,
  sessionKey: string,
  dropoff: RegisterDropoff,
): Promise<AskResult<{ registered: true; has_dialable_phone: boolean }>> {
  return host.ask<{ registered: true; has_dialable_phone: boolean }>(sessionKey, 'create', (reply, at) => ({
    type: 'dropoff.register',
    ...dropoff,
    at,
    reply,
  }));
}

/** Cancels the drop-off of an existing session; `cancelled` says whether one was registered. */
export function cancelDropoff(
  host: SessionHost,
  sessionKey: string,
  trace: DropoffCancelCommand['trace'],
): Promise<AskResult<{ cancelled: boolean }>> {
  return host.ask<{ cancelled: boolean }>(sessionKey, 'existing', (reply, at) => ({
    type: 'dropoff.cancel',
    at,
    trace,
    reply,
  }));
}
