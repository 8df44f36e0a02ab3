/**
 * The language model that may write a call's summary (CALL_SUMMARY_MODEL_*, docs/explanation/calls.md): an
 * OpenAI-compatible `/chat/completions`, asked once per call with the record's facts and the
 * transcript as the service keeps it (masked on arrival). No answer, or an unusable one, leaves the
 * summary composed from the record.
 */
export interface SummaryInput {
  facts: string;
  transcript: { role: string; text: string }[];
}

export type Summarizer = (input: SummaryInput) => Promise<string | undefined>;

const MAX_SUMMARY_CHARS = 1_000;
const INSTRUCTIONS =
  'You summarise a call between a KYC app user and its automated voice assistant for an ' +
  'operator. In two or three plain sentences say what the user was stuck on, what the ' +
  'assistant suggested and how it ended. Identity values appear masked; never guess them.';

export function openAiSummarizer(options: {
  baseUrl: string;
  apiKey: string | undefined;
  model: string;
  timeoutMs?: number;
}): Summarizer {
  return async ({ facts, transcript }) => {
    const conversation = transcript.map((turn) => `${turn.role}: ${turn.text}`).join('\n');
    try {
      const response = await fetch(`${options.baseUrl.replace(/\/$/, '')}/chat/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
        },
        body: JSON.stringify({
          model: options.model,
          messages: [
            { role: 'system', content: INSTRUCTIONS },
            { role: 'user', content: `${facts}\n\nTranscript:\n${conversation || '(not kept)'}` },
          ],
        }),
        signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
      });
      if (!response.ok) return undefined;
      const body = (await response.json()) as { choices?: { message?: { content?: unknown } }[] };
      const text = body.choices?.[0]?.message?.content;
      return typeof text === 'string' && text.trim() !== ''
        ? text.trim().slice(0, MAX_SUMMARY_CHARS).toWellFormed()
        : undefined;
    } catch {
      return undefined;
    }
  };
}
