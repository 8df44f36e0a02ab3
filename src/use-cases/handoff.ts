/**
 * A person takes over a call (docs/explanation/handoff.md): an operator joins the running call's room with a
 * token of their own, and the session records `operator_joined`, which takes the call out of the
 * queue of those waiting for a person and into the call's record. The agent, in the room, hears
 * the operator join and steps back.
 */
import type { Trace } from '../domain/activity.js';
import type { CallRecord } from '../domain/call-record.js';
import { redactForIngest } from '../domain/event-redaction.js';
import { OPERATOR_JOINED } from '../domain/sdk-event.js';
import { OPERATOR_IDENTITY_PREFIX } from '../domain/voice-session.js';
import type { PiiRules } from '../privacy/rules.js';
import type { AskFailure, SessionHost } from '../actor-system/session-host.js';
import type { TokenMinter } from '../integrations/media-port.js';
import { currentRoom } from '../machines/session/session-context.js';
import { isVoiceActive } from '../machines/session/media-contract.js';
import { ingestSdkEvent } from './ingest-sdk-event.js';

export interface OperatorJoin {
  call: Pick<CallRecord, 'call_id' | 'session_id' | 'ended_at'>;
  /** A name or handle the operator gave: kept as the privacy rule leaves it. */
  operator: string;
  trace: Trace;
}

export type Joined =
  | { ok: true; room: string; identity: string; token: string; media_url: string; expires_in_sec: number }
  | { ok: false; reason: 'call_ended' }
  | { ok: false; reason: 'not_recorded'; failure: AskFailure };

export interface JoinDeps {
  host: SessionHost;
  tokens: TokenMinter;
  piiRules: PiiRules;
}

/** The identity for `operator`: its letters and digits, so it is a valid participant identity whatever was typed. */
const identityOf = (operator: string, callId: string): string =>
  `${OPERATOR_IDENTITY_PREFIX}${
    operator
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 40) || 'operator'
  }-${callId.slice(0, 8)}`;

export async function joinCall(
  { host, tokens, piiRules }: JoinDeps,
  { call, operator, trace }: OperatorJoin,
): Promise<Joined> {
  if (call.ended_at !== null) return { ok: false, reason: 'call_ended' };
  const view = await host.snapshot(call.session_id);
  if (!view || !isVoiceActive(view.value)) return { ok: false, reason: 'call_ended' };
  const room = currentRoom(view.context);
  const identity = identityOf(operator, call.call_id);
  // Recorded before the token is handed out: a join the session did not keep gives no way into the room.
  const event = {
    session_id: call.session_id,
    event: OPERATOR_JOINED,
    screen: view.context.screen,
    properties: { operator, call_id: call.call_id },
  };
  const recorded = await ingestSdkEvent(host, call.session_id, redactForIngest(event, piiRules), trace, 'http');
  if (!recorded.ok) return { ok: false, reason: 'not_recorded', failure: recorded };
  const token = await tokens.mintToken({ room, identity, sessionId: call.session_id, dispatchAgent: false });
  return { ok: true, room, identity, token, media_url: tokens.url, expires_in_sec: tokens.tokenTtlSeconds };
}
