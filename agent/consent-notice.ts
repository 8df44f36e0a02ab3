import type { AgentContext } from './context-source.js';

/** The tenant's notice in the user's language, or English, with its version and the language it is in. */
export interface NoticeToGive {
  text: string;
  notice_version: string;
  language: string;
}

/**
 * The consent notice the agent says first in a call (docs/explanation/calls.md): the text for `language`
 * (`hi-IN` falls back to `hi`), else English, else the first the tenant gives; none when the
 * service sent no notice.
 */
export function noticeFor(context: AgentContext | undefined, language: string | undefined): NoticeToGive | undefined {
  const consent = context?.context.consent;
  if (!consent) return undefined;
  const texts = consent.notice;
  const wanted = language?.toLowerCase().replace('_', '-');
  const candidates = [wanted, wanted?.split('-')[0], 'en', Object.keys(texts)[0]].filter(
    (tag): tag is string => tag !== undefined,
  );
  for (const tag of candidates) {
    const text = texts[tag];
    if (text) return { text, notice_version: consent.notice_version, language: tag };
  }
  return undefined;
}
