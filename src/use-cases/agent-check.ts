/**
 * The media server's word that a call's agent left or its room finished (POST /v1/livekit/webhook):
 * the session checks its room now (docs/explanation/voice.md, "Webhooks from the media server").
 */
import type { AskResult, SessionHost } from '../actor-system/session-host.js';

/** Only an existing session: a webhook for a room the service no longer follows makes nothing. */
export function checkAgentNow(host: SessionHost, sessionKey: string): Promise<AskResult<{ checking: boolean }>> {
  return host.ask<{ checking: boolean }>(sessionKey, 'existing', (reply, at) => ({ type: 'agent.check', at, reply }));
}
