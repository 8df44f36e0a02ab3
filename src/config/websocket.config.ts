/** The WebSocket control plane (GET /v1/events/ws): how many sockets, how many frames, how large, how long silent. */
import { z } from 'zod';
import { positiveInt } from './env-values.js';

export const websocketEnv = z.object({
  WS_MAX_CONNECTIONS: positiveInt(2000),
  WS_MAX_MESSAGES_PER_SECOND: positiveInt(20).pipe(z.number().max(1000)),
  WS_MAX_FRAME_BYTES: positiveInt(65_536).pipe(
    z.number().min(1024).max(65_536, { error: 'must be at most 65536 (the HTTP body limit)' }),
  ),
  WS_IDLE_TIMEOUT_SECONDS: positiveInt(90).pipe(z.number().max(3600)),
});

export interface WebSocketSection {
  maxConnections: number;
  maxMessagesPerSecond: number;
  maxFrameBytes: number;
  idleTimeoutSeconds: number;
}

export function websocketSection(e: z.infer<typeof websocketEnv>): WebSocketSection {
  return {
    maxConnections: e.WS_MAX_CONNECTIONS,
    maxMessagesPerSecond: e.WS_MAX_MESSAGES_PER_SECOND,
    maxFrameBytes: e.WS_MAX_FRAME_BYTES,
    idleTimeoutSeconds: e.WS_IDLE_TIMEOUT_SECONDS,
  };
}
