import { describe, expect, it } from 'vitest';
import { WITHHELD_MARK, redactForInspection } from '../../src/privacy/inspection-redaction.js';

describe('redactForInspection', () => {
  it('withholds hints and tokens under any key path, and drops replies, knowledge-base sources and functions', () => {
    const command = {
      type: 'session.ingest',
      event: {
        event: 'component_input',
        hint: 'ABCDE1234F',
        masked: false,
        properties: { nested: [{ hint: '9876543210' }] },
      },
      reply: (value: unknown) => value,
      sources: { knowledgeBase: { general: { role: 'You are the voice assistant' } } },
      output: { token: 'eyJhbGciOiJIUzI1NiJ9.secret', url: 'wss://media.example', expires_in_sec: 3600 },
      onDone: () => undefined,
    };
    expect(redactForInspection(command)).toEqual({
      type: 'session.ingest',
      event: {
        event: 'component_input',
        hint: WITHHELD_MARK,
        masked: false,
        properties: { nested: [{ hint: WITHHELD_MARK }] },
      },
      output: { token: WITHHELD_MARK, url: 'wss://media.example', expires_in_sec: 3600 },
    });
  });

  it('keeps an absent hint absent, so a viewer can tell none was sent', () => {
    expect(redactForInspection({ hint: null, token: undefined })).toEqual({ hint: null, token: undefined });
  });

  it('never changes what it is given', () => {
    const context = {
      latest_event: { hint: '******234F' },
      voiceWork: { waiting: [{ type: 'voice.start', reply: () => undefined }] },
    };
    const before = JSON.stringify(context);
    const redacted = redactForInspection(context) as { voiceWork: { waiting: unknown[] } };
    expect(JSON.stringify(context)).toBe(before);
    expect(context.voiceWork.waiting[0]).toHaveProperty('reply');
    expect(redacted.voiceWork.waiting).toEqual([{ type: 'voice.start' }]);
  });

  it('reduces an error to its name and message (a media error may carry request details)', () => {
    const error = Object.assign(new Error('twirp error: unauthenticated'), {
      metadata: { authorization: 'Bearer secret' },
    });
    expect(redactForInspection({ error })).toEqual({
      error: { name: 'Error', message: 'twirp error: unauthenticated' },
    });
  });

  it('summarises what nests deeper than any session context, and terminates on cycles', () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    expect(JSON.stringify(redactForInspection(cyclic))).toContain('"[…]"');
  });
});
