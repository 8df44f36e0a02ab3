import { z } from 'zod';
import { SESSION_ID_PATTERN } from '../src/domain/sdk-event.js';

const DispatchMetadata = z.object({
  session_id: z.string().regex(SESSION_ID_PATTERN),
  takeover: z.boolean().optional(),
});

/** The session a job is for, from the dispatch metadata the service wrote (`{"session_id": ...}`); undefined for anything else. */
export function sessionIdOf(metadata: string): string | undefined {
  try {
    const parsed = DispatchMetadata.safeParse(JSON.parse(metadata));
    return parsed.success ? parsed.data.session_id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the job takes over a call whose agent never joined or left (the service's replacing
 * dispatch says `takeover`): the user has been waiting in silence, and hears a sorry first.
 */
export function takeoverOf(metadata: string): boolean {
  try {
    const parsed = DispatchMetadata.safeParse(JSON.parse(metadata));
    return parsed.success && parsed.data.takeover === true;
  } catch {
    return false;
  }
}

const Notice = z.object({ type: z.literal('context_updated'), session_id: z.string() });

/** A `context_updated` packet for this session: JSON of the notice's shape. Anything else (not JSON, another session) is not one. */
export function isContextNotice(payload: Uint8Array, sessionId: string): boolean {
  try {
    const parsed = Notice.safeParse(JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(payload)));
    return parsed.success && parsed.data.session_id === sessionId;
  } catch {
    return false;
  }
}
