import { describe, expect, it } from 'vitest';
import { noticeFor } from '../../agent/consent-notice.js';
import type { AgentContext } from '../../agent/context-source.js';
import { DEFAULT_SDK_CONFIG } from '../../src/domain/sdk-config.js';

const contextWith = (consent: AgentContext['context']['consent']) =>
  ({ context: { consent } }) as unknown as AgentContext;

describe("the agent's first turn: the consent notice", () => {
  it("is the tenant's text in the user's language, its base language, or English", () => {
    const context = contextWith(DEFAULT_SDK_CONFIG.consent);
    expect(noticeFor(context, 'hi')).toEqual({
      text: DEFAULT_SDK_CONFIG.consent.notice.hi,
      notice_version: 'default-1',
      language: 'hi',
    });
    expect(noticeFor(context, 'hi_IN')?.language).toBe('hi');
    expect(noticeFor(context, 'ta')).toMatchObject({ language: 'en', text: DEFAULT_SDK_CONFIG.consent.notice.en });
    expect(noticeFor(context, undefined)?.language).toBe('en');
  });

  it('is the first text given when there is no English one, and none without a notice', () => {
    expect(noticeFor(contextWith({ notice_version: 'b-1', notice: { ta: 'tamil notice' } }), 'bn')).toEqual({
      text: 'tamil notice',
      notice_version: 'b-1',
      language: 'ta',
    });
    expect(noticeFor(contextWith(null), 'hi')).toBeUndefined();
    expect(noticeFor(undefined, 'hi')).toBeUndefined();
  });
});
