/**
 * The voice use cases: start (or resume) a session's voice call, and stop it. Transport (the
 * routes, the cluster's wire) parses and answers; the command the session actor gets is built
 * here, once.
 */
import { randomUUID } from 'node:crypto';
import type { ReplyKeeping } from '../actor-system/named-request.js';
import type { AskResult, SessionHost } from '../actor-system/session-host.js';
import type { TokenMinter } from '../integrations/media-port.js';
import type {
  VoiceBusy,
  VoiceStartCommand,
  VoiceStarted,
  VoiceStopCommand,
  VoiceStopped,
} from '../machines/session/machine-events.js';

/** What a start carries besides the time and the reply: the trace, and the user and screen when the client sent them. */
export type StartVoice = Pick<VoiceStartCommand, 'trace' | 'user_id' | 'screen'>;

/** A start's reply as kept for a copy of its named request: everything but the token. */
type KeptStart = Omit<VoiceStarted, 'token'> | VoiceBusy;

/**
 * A token on disk is a credential at rest: the reply kept for a named start leaves it out, and a
 * copy gets one minted anew for the same room, identity and dispatch, with the full lifetime, as
 * a resume would (docs/decisions/0033-no-credential-kept-with-a-reply.md).
 */
const keepStartWithoutToken = (tokens: TokenMinter): ReplyKeeping<VoiceStarted | VoiceBusy, KeptStart> => ({
  kept(value) {
    if ('busy' in value) return value;
    const { token: _left_out, ...rest } = value;
    return rest;
  },
  async answer(kept) {
    if ('busy' in kept) return kept;
    const token = await tokens.mintToken(kept.minted_for);
    return { ...kept, token, media_url: tokens.url, expires_in_sec: tokens.tokenTtlSeconds };
  },
});

/** Starts or resumes the voice session of `sessionKey`, making the session if it is new; each start is a new invocation id. */
export function startVoice(
  host: SessionHost,
  sessionKey: string,
  start: StartVoice,
  tokens: TokenMinter,
): Promise<AskResult<VoiceStarted | VoiceBusy>> {
  return host.ask<VoiceStarted | VoiceBusy>(
    sessionKey,
    'create',
    (reply, at) => ({
      type: 'voice.start',
      at,
      ...start,
      invocation_id: randomUUID(),
      reply,
    }),
    keepStartWithoutToken(tokens),
  );
}

/** What a stop carries besides the time and the reply: the trace, the tenant config in force (for the cooldown after the call) and the X-Client-ID sent. */
export type StopVoice = Pick<VoiceStopCommand, 'trace' | 'sdk_overrides' | 'header_client_id'>;

/** Stops the voice session of an existing session; an inactive one answers as stopped. */
export function stopVoice(
  host: SessionHost,
  sessionKey: string,
  stop: StopVoice,
): Promise<AskResult<VoiceStopped | VoiceBusy>> {
  return host.ask<VoiceStopped | VoiceBusy>(sessionKey, 'existing', (reply, at) => ({
    type: 'voice.stop',
    at,
    ...stop,
    reply,
  }));
}
