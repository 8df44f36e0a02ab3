import { dispose } from '@livekit/rtc-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually.js';
import type { MediaStack } from './support/media-stack.js';
import { startMediaStack } from './support/media-stack.js';
import type { ChatRequest } from './support/model-stand-in.js';
import type { SimulatedUser } from './support/simulated-user.js';
import { pcmOfWav, speak } from './support/speech.js';
import { agentsIn, heardOpening, requestsFrom, startCall } from './support/voice-call.js';

/** Identity values planted in the session before the call: none may reach a model or the activity raw. */
const PAN = 'ABCPE1234F';
const PHONE = '9876543210';
const TYPED_PAN = 'BQJPK4821L';

let stack: MediaStack;
const users: SimulatedUser[] = [];

const systemPromptOf = (request: ChatRequest) => request.messages.find((message) => message.role === 'system')?.content;
const lastUserText = (request: ChatRequest) =>
  String(request.messages.filter((message) => message.role === 'user').at(-1)?.content ?? '');

beforeAll(async () => {
  stack = await startMediaStack({
    // A short minimum interval, so a notice right after a fetch is not held for long.
    service: { VOICE_CONTEXT_REFRESH_MIN_INTERVAL_SECONDS: '1' },
    models: {
      reply: (request) => `You asked: ${lastUserText(request).slice(0, 40)}. Please check the highlighted field.`,
      transcript: () => 'how do I fix my PAN',
    },
  });
});

afterEach(async () => {
  for (const user of users.splice(0)) await user.leave().catch(() => {});
});

afterAll(async () => {
  if (process.env.MEDIA_TEST_LOG)
    (await import('node:fs')).writeFileSync(process.env.MEDIA_TEST_LOG, stack?.worker.output() ?? '');
  await stack?.stop();
  await dispose();
});

/** Events of the app before the call: a PAN typed into a field and a phone number in properties, both raw. */
async function plantIdentityValues(sessionId: string) {
  const { service } = stack;
  await service.postEvent({ session_id: sessionId, event: 'screen_schema_lazy', screen: 'pan_entry' });
  await service.postEvent({
    session_id: sessionId,
    event: 'component_input',
    screen: 'pan_entry',
    component_id: 'pan_number',
    component_type: 'text',
    hint: PAN,
    masked: false,
    properties: { phone: PHONE, note: `call me on ${PHONE}` },
  });
}

describe('the voice agent on a real LiveKit server', () => {
  it('joins the room once, reads the context, and answers a typed turn without any raw identity value reaching the model or the activity', async () => {
    const sessionId = 'voice-typed-1';
    const { service, models, rooms, worker } = stack;
    await plantIdentityValues(sessionId);
    const { started, user } = await startCall(service, sessionId, users);

    // Exactly one agent, in the room the service named.
    await eventually(
      () => user.agents().length,
      (count) => count >= 1,
      30_000,
    );
    const inRoom = await rooms.listParticipants(started.media_room);
    expect(inRoom.filter((participant) => participant.identity !== user.room.localParticipant!.identity)).toHaveLength(
      1,
    );
    expect(await agentsIn(rooms, started.media_room)).toHaveLength(1);

    // Its first fetch is recorded, and it opens by saying it is automated.
    await eventually(
      () => service.activity(sessionId, 'voice_agent_context_fetch'),
      (items) => items.length >= 1,
      15_000,
    );
    await heardOpening(user);

    const watch = service.watchTurns(sessionId);
    const chats = requestsFrom(models.chats);
    await user.type(`How do I fix my PAN? It is ${TYPED_PAN}`);
    await eventually(
      () => user.transcripts.join(' '),
      (text) => text.includes('Please check the highlighted field'),
      30_000,
    );

    const request = await chats.next();
    const context = await service.client.GET('/v1/assistant/context/{session_id}', {
      params: { path: { session_id: sessionId } },
    });
    expect(systemPromptOf(request)).toBe(context.data!.system_prompt);
    for (const raw of [PAN, PHONE, TYPED_PAN]) expect(request.raw).not.toContain(raw);
    expect(lastUserText(request)).toContain('How do I fix my PAN?');

    // Both turns recorded as voice_conversation_turn (the opening line, the user's, the answer), masked by the service.
    await eventually(
      () => watch.turns.size,
      (size) => size >= 3,
      15_000,
    );
    await watch.stop();
    const stored = [...watch.turns.values()].map(
      (event) => event.properties as { role: string; channel: string; text: string },
    );
    expect(stored.find((turn) => turn.role === 'user')).toMatchObject({
      channel: 'chat',
      text: expect.stringContaining('How do I fix my PAN?'),
    });
    expect(
      stored
        .filter((turn) => turn.role === 'agent')
        .map((turn) => turn.text)
        .join(' '),
    ).toContain('Please check the highlighted field');
    const recorded = JSON.stringify([...watch.turns.values()]);
    for (const raw of [PAN, PHONE, TYPED_PAN]) expect(recorded).not.toContain(raw);
    expect(
      (await service.activity(sessionId, 'event')).filter((item) => item.payload.event === 'voice_conversation_turn')
        .length,
    ).toBeGreaterThanOrEqual(3);
    // The agent logs no transcript: not what the user typed, not what it answered.
    expect(worker.output()).not.toContain('How do I fix my PAN');
    expect(worker.output()).not.toContain('Please check the highlighted field');
  });

  it('hears about a validation failure during the call, and its next model request carries it', async () => {
    const sessionId = 'voice-notice-1';
    const { service, models } = stack;
    await plantIdentityValues(sessionId);
    const { user } = await startCall(service, sessionId, users);
    await heardOpening(user);
    const fetches = (await service.activity(sessionId, 'voice_agent_context_fetch')).length;

    await service.postEvent({
      session_id: sessionId,
      event: 'validation_failed',
      screen: 'pan_entry',
      component_id: 'pan_number',
      failure_reason_code: 'PAN_NAME_MISMATCH',
      errors: ['PAN_NAME_MISMATCH'],
    });
    // The notice makes the agent fetch again, without any user turn.
    await eventually(
      () => service.activity(sessionId, 'voice_agent_context_fetch'),
      (items) => items.length > fetches,
      15_000,
    );

    const chats = requestsFrom(models.chats);
    await user.type('What went wrong?');
    expect(String(systemPromptOf(await chats.next()))).toContain('PAN_NAME_MISMATCH');
  });

  it('hears a spoken turn through the real VAD, has it transcribed, and answers with audible speech', async () => {
    const sessionId = 'voice-spoken-1';
    const { service, models } = stack;
    await plantIdentityValues(sessionId);
    const { user } = await startCall(service, sessionId, users);
    await heardOpening(user);
    // Let the opening line finish playing, then measure only what answers the question.
    await eventually(
      () => user.agentAudioFrames(),
      (frames) => frames > 0,
      15_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const transcriptions = requestsFrom(models.transcriptions);
    const chats = requestsFrom(models.chats);
    user.resetLoudest();

    const phrase = speak('how do I fix my PAN');
    await user.speak(phrase.samples, phrase.sampleRate);

    // The VAD cut the utterance and the transcription stand-in received it as a WAV of speech.
    const upload = pcmOfWav((await transcriptions.next()).audio);
    expect(upload.samples.length / upload.sampleRate).toBeGreaterThan(0.5);
    // Its transcript became the user's turn in the next model request, and the answer was spoken.
    expect(lastUserText(await chats.next())).toBe('how do I fix my PAN');
    await eventually(
      () => user.transcripts.join(' '),
      (text) => text.includes('You asked: how do I fix my PAN'),
      30_000,
    );
    await eventually(
      () => user.loudestAgentAudio(),
      (rms) => rms > 1000,
      30_000,
    );
  });
});
