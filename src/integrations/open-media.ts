import type { MediaSection } from '../config/media.config.js';
import { createLiveKitMedia } from './livekit-media.js';
import type { MediaProvider } from './media-port.js';
import { createPlaceholderMedia } from './placeholder-media.js';

/** LiveKit when all three credentials are set (media ready), the placeholder otherwise. */
export function createMediaProvider(media: MediaSection): MediaProvider {
  const { livekitUrl, livekitApiKey, livekitApiSecret } = media;
  if (livekitUrl === undefined || livekitApiKey === undefined || livekitApiSecret === undefined) {
    return createPlaceholderMedia(media.tokenTtlSeconds);
  }
  return createLiveKitMedia({
    url: livekitUrl,
    apiKey: livekitApiKey,
    apiSecret: livekitApiSecret,
    agentName: media.agentName,
    tokenTtlSeconds: media.tokenTtlSeconds,
    requestTimeoutSeconds: media.requestTimeoutSeconds,
  });
}
