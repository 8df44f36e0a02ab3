import { llm } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import { guardedChat } from '../../agent/guarded-chat.js';
import { holdsDigits, maskCall, withoutDigits } from '../../agent/split-values.js';
import { TurnReporter } from '../../agent/turn-reporter.js';
import type { RunningServer } from '../../src/http/server.js';
import { createServiceClient } from '../../src/client/index.js';
import { createHarness, serve } from '../support/harness.js';

const servers: RunningServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close(100);
});

/** What a role said in the chat a model request carries. */
const textsOf = (chat: llm.ChatContext, role: 'user' | 'assistant'): string[] =>
  chat.items
    .filter((item): item is llm.ChatMessage => item.type === 'message' && item.role === role)
    .map((item) => item.content.filter((part) => typeof part === 'string').join(' '));

/** Digits in figures or words: what no piece of a value said across turns may keep. */
const DIGITS = /\d|\b(?:zero|one|two|three|four|five|six|seven|eight|nine)\b|नौ|आठ/i;

describe('a value said in pieces over any number of turns (docs/explanation/privacy.md, "The voice agent")', () => {
  it.each([
    [['My mobile number is nine eight seven six five', 'four three two one zero']],
    [['My mobile number is 98', '76', '54', '32', '10']],
    [['my aadhaar is 2345 6789', '0124']],
    [['my PAN is A B C D E', '1 2', '3 4 F']],
    [['the code you sent is 77', '12', '04']],
    [['नौ आठ', 'सात छह', 'पांच']],
  ])('%j: every piece goes with its digits hidden', (pieces) => {
    const masked = maskCall(pieces.map((text) => ({ role: 'user' as const, text })));
    for (const piece of masked) expect(piece).not.toMatch(DIGITS);
  });

  it('a turn with a few digits and no neighbour saying more keeps them; one alone with four or more is masked by the rule', () => {
    expect(
      maskCall([
        { role: 'user', text: 'I am on step 2' },
        { role: 'assistant', text: 'Go on.' },
        { role: 'user', text: 'hello' },
      ]),
    ).toEqual(['I am on step 2', 'Go on.', 'hello']);
    expect(maskCall([{ role: 'user', text: 'the code I got is 771204' }])).toEqual(['the code I got is ******']);
    expect(holdsDigits('no digits here')).toBe(false);
    expect(withoutDigits('it is 4 8 and nine')).toBe('it is * * *** ****');
    expect(holdsDigits('how do I fix it')).toBe(false);
  });

  it("the chat a model request carries: the pieces' digits hidden, and the assistant's echo of them too", () => {
    const chat = llm.ChatContext.empty();
    chat.addMessage({ role: 'user', content: 'How do I fix my PAN? It is ABCDE1234F' });
    chat.addMessage({ role: 'assistant', content: 'Please check the highlighted field.' });
    chat.addMessage({ role: 'user', content: 'my aadhaar is 2345 6789' });
    chat.addMessage({ role: 'assistant', content: 'Got 2345 6789, go on.' });
    chat.addMessage({ role: 'user', content: '0124' });
    const guarded = guardedChat(chat, 'the prompt');
    expect(textsOf(guarded, 'user')).toEqual([
      'How do I fix my PAN? It is **********',
      'my aadhaar is **** ****',
      '****',
    ]);
    expect(textsOf(guarded, 'assistant')).toEqual(['Please check the highlighted field.', 'Got **** ****, go on.']);
    // The session's own history is untouched.
    expect(textsOf(chat, 'user')).toContain('0124');
  });

  it('the turns posted to the service: any user turn saying digits, and the answer echoing them, go with digits hidden', async () => {
    const h = createHarness();
    const server = await serve(h);
    servers.push(server);
    const reporter = new TurnReporter({
      client: createServiceClient({ baseUrl: server.url }),
      sessionId: 'split-1',
      timeoutMs: 5_000,
      log: () => undefined,
    });
    await reporter.report('user', 'voice', 'my aadhaar is 23');
    const first = (await h.http.get('/api/sessions/split-1')).body.latest_event.properties;
    expect(first).toMatchObject({ role: 'user', text: 'my aadhaar is **', turn_index: 1 });
    await reporter.report('agent', 'voice', 'You said 23, go on.');
    expect((await h.http.get('/api/sessions/split-1')).body.latest_event.properties).toMatchObject({
      role: 'agent',
      text: 'You said **, go on.',
    });
    await reporter.report('user', 'voice', '45');
    await reporter.report('agent', 'voice', 'Thanks, step 3 is next.');
    const stored = (await h.http.get('/api/sessions/split-1')).body.latest_event.properties;
    expect(stored).toMatchObject({ role: 'agent', text: 'Thanks, step * is next.', turn_index: 4 });
  });
});
