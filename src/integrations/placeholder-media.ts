import { randomBytes } from 'node:crypto';
import type { MediaProvider } from './media-port.js';

const notConfigured = () =>
  Promise.reject(new Error('media is not configured: set LIVEKIT_URL, LIVEKIT_API_KEY and LIVEKIT_API_SECRET'));

/**
 * Media without credentials (docs/explanation/voice.md): voice sessions still start, with a token that
 * is deliberately not a JWT so that no client mistakes it for one. The session machine never
 * asks it for rooms or agents (`ready` is false); those calls refuse rather than pretend.
 */
export function createPlaceholderMedia(tokenTtlSeconds: number): MediaProvider {
  return {
    ready: false,
    url: '',
    tokenTtlSeconds,
    callTimeoutMs: 0,
    createRoom: notConfigured,
    findAgentDispatch: notConfigured,
    dispatchAgent: notConfigured,
    agentPresence: notConfigured,
    replaceAgentDispatch: notConfigured,
    removeAgent: notConfigured,
    deleteRoom: notConfigured,
    notifyAgent: notConfigured,
    mintToken: () => Promise.resolve(`placeholder.${randomBytes(18).toString('base64url')}`),
  };
}
