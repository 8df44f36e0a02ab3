/** The activity stream (GET /api/activity/stream): how many may be open, how far one may fall behind, how often it hears a heartbeat. */
import { z } from 'zod';
import { positiveInt } from './env-values.js';

export const streamEnv = z.object({
  SSE_MAX_STREAMS: positiveInt(2000),
  SSE_MAX_BUFFER_BYTES: positiveInt(1_048_576).pipe(z.number().min(65_536)),
  SSE_HEARTBEAT_SECONDS: positiveInt(15).pipe(z.number().max(3600)),
});

export interface StreamSection {
  maxStreams: number;
  /** Unread bytes one stream client may have queued before it is cut. */
  maxBufferBytes: number;
  heartbeatSeconds: number;
}

export function streamSection(e: z.infer<typeof streamEnv>): StreamSection {
  return {
    maxStreams: e.SSE_MAX_STREAMS,
    maxBufferBytes: e.SSE_MAX_BUFFER_BYTES,
    heartbeatSeconds: e.SSE_HEARTBEAT_SECONDS,
  };
}
