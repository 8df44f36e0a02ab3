import { llm } from '@livekit/agents';
import { afterEach, describe, expect, it } from 'vitest';
import { guardedChat } from '../../agent/guarded-chat.js';
import { valueSpansTurns, withoutDigits } from '../../agent/split-values.js';
import { TurnReporter } from '../../agent/turn-reporter.js';
import type { RunningServer } from '../../src/http/server.js';
import { createServiceClient } from '../../src/client/index.js';
import { createHarness, serve } from '../support/harness.js';

const servers: RunningServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close(100);
});

/** What the user said in the chat a model request carries. */
const userTexts = (chat: llm.ChatContext): string[] =>
  chat.items.filter((item): item is llm.ChatMessage => item.type === 'message' && item.role === 'user').map((item) => item.content.filter((part) => typeof part === 'string').join(' '));

describe('a value said across two turns (the user paused mid-number and the turn ended there)', () => {
  it.each([
    ['My mobile number is nine eight seven six five', 'four three two one zero'],
    ['My mobile number is 98765', '43210'],
    ['my aadhaar is 2345 6789', '0124'],
    ['my PAN is A B C D E', '1 2 3 4 F'],
  ])('"%s" then "%s" is one value', (first, second) => {
    expect(valueSpansTurns(first, second)).toBe(true);
    // What is left of either half says nothing of the value, in figures or in words.
    for (const half of [withoutDigits(first), withoutDigits(second)]) expect(half).not.toMatch(/\d|nine|eight|four|three/i);
  });

  it.each([
    ['hello', 'how are you'],
    ['my pan is ABCDE1234F', 'thanks'],
    ['I am on step 2', 'and it says 3 tries left'],
  ])('"%s" then "%s" is not', (first, second) => {
    expect(valueSpansTurns(first, second)).toBe(false);
  });

  it("the chat a model request carries has both halves' digits hidden; other turns are masked as before", () => {
    const chat = llm.ChatContext.empty();
    chat.addMessage({ role: 'user', content: 'How do I fix my PAN? It is ABCDE1234F' });
    chat.addMessage({ role: 'assistant', content: 'Please check the highlighted field.' });
    chat.addMessage({ role: 'user', content: 'My mobile number is 98765' });
    chat.addMessage({ role: 'user', content: '43210' });
    const sent = userTexts(guardedChat(chat, 'the prompt'));
    expect(sent).toEqual(['How do I fix my PAN? It is ******234F', 'My mobile number is *****', '*****']);
    // The session's own history is untouched.
    expect(userTexts(chat)).toContain('43210');
  });

  it('the turns posted to the service: the second half goes with its digits hidden, so the stored turns cannot be read together', async () => {
    const h = createHarness();
    const server = await serve(h);
    servers.push(server);
    const reporter = new TurnReporter({ client: createServiceClient({ baseUrl: server.url }), sessionId: 'split-1', timeoutMs: 5_000, log: () => undefined });
    await reporter.report('user', 'voice', 'My mobile number is 98765');
    await reporter.report('agent', 'voice', 'Go on.');
    await reporter.report('user', 'voice', '43210');
    const stored = (await h.http.get('/api/sessions/split-1')).body.latest_event.properties;
    expect(stored).toMatchObject({ role: 'user', text: '*****', turn_index: 3 });
  });
});
