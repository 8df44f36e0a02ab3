import { randomBytes } from 'node:crypto';
import { dispose } from '@livekit/rtc-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '../src/client/schema.js';
import { WebhookReceiver } from '../test/support/webhook-receiver.js';
import { eventually } from './support/eventually.js';
import type { MediaStack } from './support/media-stack.js';
import { startMediaStack } from './support/media-stack.js';
import { SERVICE_API_KEY } from './support/media-service.js';
import type { SimulatedUser } from './support/simulated-user.js';
import { heardOpening, startCall } from './support/voice-call.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const TYPED_PAN = 'BQJPK4821L';

let stack: MediaStack;
let receiver: WebhookReceiver;
const users: SimulatedUser[] = [];

beforeAll(async () => {
  receiver = new WebhookReceiver(SECRET);
  const url = await receiver.start();
  stack = await startMediaStack({
    service: { WEBHOOK_URL: url, WEBHOOK_SECRET: SECRET },
    models: {
      // The model records the user's yes through the agent's tool, once; then it answers.
      reply: (request) => {
        const last = request.messages.at(-1);
        const said = String(request.messages.filter((message) => message.role === 'user').at(-1)?.content ?? '');
        if (last?.role === 'user' && /^yes, let us continue/i.test(said))
          return { toolCall: { name: 'record_consent', arguments: { decision: 'given' } } };
        if (last?.role === 'tool') return 'Thank you. What can I help you with?';
        return 'Please check the highlighted field and type the number again.';
      },
      transcript: () => 'how do I fix my PAN',
    },
  });
});

afterAll(async () => {
  for (const user of users.splice(0)) await user.leave().catch(() => {});
  await stack?.stop();
  await receiver?.stop();
  await dispose();
});

describe('a call on a real LiveKit server leaves its record', () => {
  it(
    'the agent gives the consent notice first; the call keeps the masked transcript and its ' +
      'report, and a signed call.ended reaches a real receiver',
    async () => {
      const sessionId = 'call-record-1';
      const { service } = stack;
      await service.postEvent({
        session_id: sessionId,
        event: 'validation_failed',
        screen: 'pan_entry',
        component_id: 'pan_number',
        errors: ['pan_invalid'],
      });
      const { started, user } = await startCall(service, sessionId, users);
      // The default notice says a machine is talking and asks to continue.
      await heardOpening(user);
      await eventually(
        () => user.transcripts.join(' '),
        (text) => text.includes('Shall we continue?'),
        30_000,
      );

      // The app records the user's yes.
      const consent = await service.client.POST('/v1/assistant/consent', {
        body: { session_id: sessionId, decision: 'given', notice_version: 'default-1', language: 'en' },
      });
      expect(consent.response.status).toBe(200);

      await user.type(`How do I fix my PAN? It is ${TYPED_PAN}`);
      await eventually(
        () => user.transcripts.join(' '),
        (text) => text.includes('type the number again'),
        30_000,
      );
      const callsOf = async () => {
        const response = await fetch(`${service.url}/api/sessions/${sessionId}/calls`, {
          headers: { 'x-api-key': SERVICE_API_KEY },
        });
        return ((await response.json()) as { calls: components['schemas']['Call'][] }).calls;
      };
      await eventually(callsOf, (calls) => (calls[0]?.transcript.length ?? 0) >= 2, 15_000);
      await service.stopVoice(sessionId);

      const [call] = await eventually(
        callsOf,
        (calls) => calls[0]?.report !== null && calls[0]?.report !== undefined,
        15_000,
      );
      expect(call).toMatchObject({
        call_id: started.assistant_invocation_id,
        ended_by: 'client',
        start: { step: 'pan_entry', errors: ['pan_invalid'] },
        transcript_kept: true,
        report: { outcome: 'unresolved', step: 'pan_entry', summary_source: 'record' },
      });
      // The notice was said before consent: counted, not kept. The user's turn and the answer are kept, masked.
      const transcript = call!.transcript as { role: string; channel: string; text: string }[];
      expect(transcript.find((turn) => turn.role === 'user')).toMatchObject({
        channel: 'chat',
        text: expect.stringContaining('How do I fix my PAN?'),
      });
      expect(transcript.some((turn) => turn.role === 'agent' && turn.text.includes('type the number again'))).toBe(
        true,
      );
      expect(JSON.stringify(call)).not.toContain(TYPED_PAN);
      expect(call!.context_versions.length).toBeGreaterThanOrEqual(1);

      const ended = await eventually(
        () => receiver.messages('call.ended'),
        (messages) => messages.length >= 1,
        15_000,
      );
      expect(ended[0]!.data).toMatchObject({ call_id: call!.call_id, report: { outcome: 'unresolved' } });
      expect(receiver.messages('consent.recorded')[0]!.data).toMatchObject({
        session_id: sessionId,
        decision: 'given',
      });
      expect(receiver.received.filter((message) => message.verified instanceof Error)).toEqual([]);
    },
  );
});

describe('the agent records consent itself', () => {
  it("offers the model record_consent, and a yes to the notice becomes the session's consent entry with the notice's version and language", async () => {
    const sessionId = 'call-consent-1';
    const { service, models } = stack;
    const { user } = await startCall(service, sessionId, users);
    await eventually(
      () => user.transcripts.join(' '),
      (text) => text.includes('Shall we continue?'),
      30_000,
    );
    await user.type('Yes, let us continue');
    await eventually(
      () => user.transcripts.join(' '),
      (text) => text.includes('What can I help you with?'),
      30_000,
    );
    const entries = await eventually(
      () => service.activity(sessionId, 'consent'),
      (items) => items.length >= 1,
      15_000,
    );
    expect(entries.map((item) => item.payload)).toEqual([
      { decision: 'given', notice_version: 'default-1', language: 'en' },
    ]);
    expect(models.chats.some((request) => request.tools?.some((tool) => tool.function.name === 'record_consent'))).toBe(
      true,
    );
    await service.stopVoice(sessionId);
  });
});
