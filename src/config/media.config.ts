/** The media server (LiveKit) voice calls run on: where it is, its credentials, and how each call to it is bounded. */
import { z } from 'zod';
import { MEDIA_CALLS_PER_START } from '../domain/voice-session.js';
import { invalidConfiguration } from './config-error.js';
import { credential, mediaServerUrl, optionalText, positiveInt } from './env-values.js';

export const mediaEnv = z.object({
  LIVEKIT_URL: mediaServerUrl,
  LIVEKIT_API_KEY: credential(optionalText),
  LIVEKIT_API_SECRET: credential(optionalText),
  // The room name `{prefix}-{session_id}` must stay within the media server's 256-byte limit.
  MEDIA_ROOM_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9._:-]{1,64}$/, { error: 'must be 1-64 characters of A-Za-z0-9._:-' })
    .default('kyc-room'),
  // The agent the media server dispatches into each room: a voice setting, read by the media provider.
  VOICE_AGENT_NAME: z.string().trim().min(1).max(128).default('kyc-voice-agent'),
  TOKEN_TTL_SECONDS: positiveInt(3600).pipe(z.number().max(86_400)),
  MEDIA_REQUEST_TIMEOUT_SECONDS: z.coerce.number().positive().max(30).default(3),
});

export interface MediaSection {
  livekitUrl: string | undefined;
  livekitApiKey: string | undefined;
  livekitApiSecret: string | undefined;
  roomPrefix: string;
  /** VOICE_AGENT_NAME: the `agent_name` dispatched into each room. */
  agentName: string;
  tokenTtlSeconds: number;
  /** Budget of each call to the media server, in seconds (fractions allowed). */
  requestTimeoutSeconds: number;
}

/** Which credentials are missing, in the order the configuration table lists them. */
export function missingMediaSettings(media: MediaSection): string[] {
  const settings: [string, string | undefined][] = [
    ['LIVEKIT_URL', media.livekitUrl],
    ['LIVEKIT_API_KEY', media.livekitApiKey],
    ['LIVEKIT_API_SECRET', media.livekitApiSecret],
  ];
  return settings.filter(([, value]) => value === undefined).map(([name]) => name);
}

/** `shutdownGraceSeconds` is the HTTP section's: a voice start under way at shutdown must fit in it. */
export function mediaSection(e: z.infer<typeof mediaEnv>, http: { shutdownGraceSeconds: number }): MediaSection {
  const media: MediaSection = {
    livekitUrl: e.LIVEKIT_URL,
    livekitApiKey: e.LIVEKIT_API_KEY,
    livekitApiSecret: e.LIVEKIT_API_SECRET,
    roomPrefix: e.MEDIA_ROOM_PREFIX,
    agentName: e.VOICE_AGENT_NAME,
    tokenTtlSeconds: e.TOKEN_TTL_SECONDS,
    requestTimeoutSeconds: e.MEDIA_REQUEST_TIMEOUT_SECONDS,
  };
  // Some but not all three: such a start would run on placeholder tokens without a word, and every
  // voice start would fail on the device instead.
  const missing = missingMediaSettings(media);
  if (missing.length > 0 && missing.length < 3) {
    throw invalidConfiguration(
      `${missing.join(', ')}: required with the other LIVEKIT_* settings (set all three for voice on LiveKit, or none for placeholder tokens)`,
    );
  }
  // A voice start still waiting on the media server when shutdown cuts connections gets ECONNRESET:
  // the grace must cover the longest start, each of its media calls taking its whole timeout.
  if (e.MEDIA_REQUEST_TIMEOUT_SECONDS * MEDIA_CALLS_PER_START > http.shutdownGraceSeconds) {
    throw invalidConfiguration(
      `MEDIA_REQUEST_TIMEOUT_SECONDS (${e.MEDIA_REQUEST_TIMEOUT_SECONDS}) × ${MEDIA_CALLS_PER_START} media calls per voice start exceeds SHUTDOWN_GRACE_SECONDS (${http.shutdownGraceSeconds}): in-flight voice starts would be cut at shutdown; lower the first or raise the second`,
    );
  }
  return media;
}
