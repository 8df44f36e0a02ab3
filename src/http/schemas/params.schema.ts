import { z } from 'zod';
import { SessionId } from '../../domain/sdk-event.js';
import { SAFE_ID_PATTERN } from '../../domain/trace.js';
import type { ParamDoc } from '../route-doc.js';

export const SESSION_ID_PARAM: ParamDoc = {
  description: 'the session key',
  schema: SessionId,
  example: '7664f88e-4980-41c3-bec0-f0e1591ee548',
};

/** X-Client-ID as clientIdHeader() accepts it. */
export const ClientIdHeader = z.string().regex(SAFE_ID_PATTERN);

export const clientIdParam = (description: string): ParamDoc => ({
  description,
  schema: ClientIdHeader,
  example: 'demo-bank',
});

/**
 * A page size as every listing takes it: an integer from 1 to `max`, anything else a 422 naming
 * the range. Larger values are refused rather than cut down, so a client asking for more than it
 * gets is told so instead of taking a short page for the end.
 */
export function pageLimit(max: number) {
  const range = `must be an integer from 1 to ${max}`;
  return z
    .string({ error: 'must be a single integer' })
    .regex(/^\s*\d+\s*$/, { error: range })
    .transform(Number)
    .pipe(z.number().min(1, { error: range }).max(max, { error: range }));
}

/** The document's view of a page size: sent as a string, read as the integer it states. */
export const pageLimitDoc = (max: number, fallback: number) => ({
  type: 'integer',
  minimum: 1,
  maximum: max,
  default: fallback,
});
