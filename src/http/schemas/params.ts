import { z } from 'zod';
import { SessionId } from '../../domain/sdk-event.js';
import { SAFE_ID_PATTERN } from '../../domain/trace.js';
import type { ParamDoc } from '../route-doc.js';

export const SESSION_ID_PARAM: ParamDoc = { description: 'the session key', schema: SessionId, example: '7664f88e-4980-41c3-bec0-f0e1591ee548' };

/** X-Client-ID as clientIdHeader() accepts it. */
export const ClientIdHeader = z.string().regex(SAFE_ID_PATTERN);

export const clientIdParam = (description: string): ParamDoc => ({ description, schema: ClientIdHeader, example: 'demo-bank' });
