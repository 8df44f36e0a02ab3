import { describe, expect, it } from 'vitest';
import { APP_METHODS } from '../agent/app-actions.js';
import { eventually } from './support/eventually.js';
import { mediaSuite, toolModel } from './support/media-suite.js';
import { heardOpening, startCall } from './support/voice-call.js';

const { stack, users } = mediaSuite({
  models: {
    reply: toolModel(
      [
        { when: /which field/i, name: 'highlight_field', arguments: { component_id: 'pan_number' } },
        {
          when: /hint/i,
          name: 'show_hint',
          arguments: { text: 'Type it like ABCPE1234F: five letters, four digits, one letter.' },
        },
      ],
      'There, in the app.',
      'Please check the highlighted field.',
    ),
    transcript: () => 'how do I fix my PAN',
  },
});

describe('the agent acts on the app over LiveKit RPC, on a real LiveKit server', () => {
  it("highlights a field and shows a masked hint in the user's app through its tools, each recorded with what came of it", async () => {
    const sessionId = 'app-actions-1';
    const { service } = stack();
    const { user } = await startCall(service, sessionId, users);
    // The app's side: the methods it registers, answering once it has done what was asked.
    const asked: { method: string; payload: Record<string, unknown> }[] = [];
    for (const method of Object.values(APP_METHODS)) {
      user.room.localParticipant!.registerRpcMethod(method, async (data) => {
        asked.push({ method, payload: JSON.parse(data.payload) as Record<string, unknown> });
        return 'ok';
      });
    }
    await heardOpening(user);

    await user.type('Which field is wrong?');
    await eventually(
      () => asked.length,
      (count) => count >= 1,
      30_000,
    );
    await user.type('Can you give me a hint?');
    await eventually(
      () => asked.length,
      (count) => count >= 2,
      30_000,
    );
    expect(asked[0]).toEqual({ method: APP_METHODS.highlight_field, payload: { component_id: 'pan_number' } });
    expect(asked[1]!.method).toBe(APP_METHODS.show_hint);
    expect(asked[1]!.payload.text).toContain('five letters, four digits, one letter');
    expect(JSON.stringify(asked)).not.toContain('ABCPE1234F');

    const actions = await eventually(
      async () => (await service.activity(sessionId, 'event')).filter((item) => item.payload.event === 'agent_action'),
      (found) => found.length >= 2,
      15_000,
    );
    expect(actions.map((item) => [item.payload.action, item.payload.outcome])).toEqual([
      ['highlight_field', 'done'],
      ['show_hint', 'done'],
    ]);
    await service.stopVoice(sessionId);
  });
});
