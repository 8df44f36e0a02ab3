import { llm } from '@livekit/agents';
import { z } from 'zod';
import type { ServiceClient } from '../src/client/index.js';
import type { NoticeToGive } from './consent-notice.js';

export interface ConsentToolOptions {
  client: ServiceClient;
  sessionId: string;
  /** The notice the call opened with: its version and language are recorded with the answer. */
  notice: () => NoticeToGive | undefined;
  timeoutMs: number;
  log(message: string, fields?: Record<string, unknown>): void;
}

/**
 * The model's way to record the user's answer to the consent notice (docs/explanation/calls.md): it calls
 * `record_consent` with the decision, and the agent posts it to the service with the notice's
 * version and language. The words of the answer stay in the conversation; only the decision goes.
 */
export function consentTool(options: ConsentToolOptions) {
  return llm.tool({
    description:
      "Record the user's answer to the consent notice given at the start of the call: " +
      '"given" when they agree to continue, "refused" when they decline, "withdrawn" when they later take their consent back. ' +
      'Call it once for each answer, then carry on helping either way.',
    parameters: z.object({ decision: z.enum(['given', 'refused', 'withdrawn']) }),
    execute: async ({ decision }) => {
      const notice = options.notice();
      if (!notice) return 'There is no consent notice for this call: nothing to record.';
      try {
        const { response } = await options.client.POST('/v1/assistant/consent', {
          body: {
            session_id: options.sessionId,
            decision,
            notice_version: notice.notice_version,
            language: notice.language,
          },
          signal: AbortSignal.timeout(options.timeoutMs),
        });
        if (response.ok) return `Recorded: consent ${decision}.`;
        options.log('consent not recorded', { status: response.status });
      } catch (error) {
        options.log('consent not recorded', { cause: error instanceof Error ? error.name : 'error' });
      }
      return 'The answer could not be recorded; continue helping and do not keep a record of the conversation.';
    },
  });
}
