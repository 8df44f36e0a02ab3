import type { AppConfig } from '../config.js';
import { createLiveKitMedia } from './livekit-media.js';
import type { MediaProvider } from './media.js';
import { createPlaceholderMedia } from './placeholder-media.js';

/** Which credentials are missing, in the order the configuration table lists them. */
export function missingMediaSettings(config: AppConfig): string[] {
  const settings: [string, string | undefined][] = [
    ['LIVEKIT_URL', config.livekitUrl],
    ['LIVEKIT_API_KEY', config.livekitApiKey],
    ['LIVEKIT_API_SECRET', config.livekitApiSecret],
  ];
  return settings.filter(([, value]) => value === undefined).map(([name]) => name);
}

/** LiveKit when all three credentials are set (media ready), the placeholder otherwise. */
export function createMediaProvider(config: AppConfig): MediaProvider {
  const { livekitUrl, livekitApiKey, livekitApiSecret } = config;
  if (livekitUrl === undefined || livekitApiKey === undefined || livekitApiSecret === undefined) {
    return createPlaceholderMedia(config.tokenTtlSeconds);
  }
  return createLiveKitMedia({
    url: livekitUrl,
    apiKey: livekitApiKey,
    apiSecret: livekitApiSecret,
    agentName: config.voiceAgentName,
    tokenTtlSeconds: config.tokenTtlSeconds,
    requestTimeoutSeconds: config.mediaRequestTimeoutSeconds,
  });
}
