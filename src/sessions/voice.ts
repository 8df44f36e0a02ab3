/**
 * The voice use cases: start (or resume) a session's voice call, and stop it. Transport (the
 * routes, the cluster's wire) parses and answers; the command the session actor gets is built
 * here, once.
 */
import { randomUUID } from 'node:crypto';
import type { AskResult, SessionHost } from '../actors/session-host.js';
import type { VoiceBusy, VoiceStartCommand, VoiceStarted, VoiceStopCommand, VoiceStopped } from '../machines/session/events.js';

/** What a start carries besides the time and the reply: the trace, and the user and screen when the client sent them. */
export type StartVoice = Pick<VoiceStartCommand, 'trace' | 'user_id' | 'screen'>;

/** Starts or resumes the voice session of `sessionKey`, making the session if it is new; each start is a new invocation id. */
export function startVoice(host: SessionHost, sessionKey: string, start: StartVoice): Promise<AskResult<VoiceStarted | VoiceBusy>> {
  return host.ask<VoiceStarted | VoiceBusy>(sessionKey, 'create', (reply, at) => ({
    type: 'voice.start',
    at,
    ...start,
    invocation_id: randomUUID(),
    reply,
  }));
}

/** What a stop carries besides the time and the reply: the trace, the tenant config in force (for the cooldown after the call) and the X-Client-ID sent. */
export type StopVoice = Pick<VoiceStopCommand, 'trace' | 'sdk_overrides' | 'header_client_id'>;

/** Stops the voice session of an existing session; an inactive one answers as stopped. */
export function stopVoice(host: SessionHost, sessionKey: string, stop: StopVoice): Promise<AskResult<VoiceStopped | VoiceBusy>> {
  return host.ask<VoiceStopped | VoiceBusy>(sessionKey, 'existing', (reply, at) => ({
    type: 'voice.stop',
    at,
    ...stop,
    reply,
  }));
}
