import { describe, expect, it } from 'vitest';
import { HANDOFF_LINES } from '../agent/handoff.js';
import { eventually } from './support/eventually.js';
import { SERVICE_API_KEY } from './support/media-service.js';
import { mediaSuite, toolModel } from './support/media-suite.js';
import { joinAsUser } from './support/simulated-user.js';
import { heardOpening, requestsFrom, startCall } from './support/voice-call.js';

const { stack, users } = mediaSuite({
  models: {
    reply: toolModel(
      [{ when: /a person/i, name: 'request_human', arguments: { reason: 'the user asked for a person' } }],
      'Please stay on the line.',
      'Please check the highlighted field.',
    ),
    transcript: () => 'how do I fix my PAN',
  },
});

const handoffs = async (url: string) => {
  const response = await fetch(`${url}/api/handoffs`, { headers: { 'x-api-key': SERVICE_API_KEY } });
  return ((await response.json()) as { handoffs: { call_id: string; handoff: { reason: string } }[] }).handoffs;
};

describe('a person takes over from the agent on a real LiveKit server (docs/explanation/handoff.md)', () => {
  it('asks for a person through its tool, and when an operator joins says so and answers the user no more', async () => {
    const sessionId = 'handoff-agent-1';
    const { service, models } = stack();
    const { started, user } = await startCall(service, sessionId, users);
    await heardOpening(user);

    // The user asks for a person: the model calls request_human, the call enters the queue.
    await user.type('I want to talk to a person');
    const waiting = await eventually(
      () => handoffs(service.url),
      (found) => found.some((call) => call.call_id === started.assistant_invocation_id),
      30_000,
    );
    expect(waiting.find((call) => call.call_id === started.assistant_invocation_id)!.handoff.reason).toBe(
      'the user asked for a person',
    );
    expect(models.chats.some((request) => request.tools?.some((tool) => tool.function.name === 'request_human'))).toBe(
      true,
    );

    // An operator joins with the token the service gives: the agent says a colleague is joining.
    const joined = await fetch(`${service.url}/api/calls/${started.assistant_invocation_id}/join`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': SERVICE_API_KEY },
      body: JSON.stringify({ operator: 'desk 4' }),
    });
    expect(joined.status).toBe(200);
    const { media_url, token } = (await joined.json()) as { media_url: string; token: string };
    const operator = await joinAsUser(media_url, token);
    users.push(operator);
    await eventually(
      () => user.transcripts.join(' '),
      (text) => text.includes(HANDOFF_LINES.joining),
      30_000,
    );

    // Stepped back: what the user types now reaches no model, and the agent says nothing more.
    const chats = requestsFrom(models.chats);
    const heard = user.transcripts.length;
    await user.type('hello, is someone there?');
    await new Promise((resolve) => setTimeout(resolve, 4000));
    expect(chats.since()).toEqual([]);
    expect(user.transcripts.slice(heard)).toEqual([]);
    expect((await handoffs(service.url)).some((call) => call.call_id === started.assistant_invocation_id)).toBe(false);
    await service.stopVoice(sessionId);
  });
});
