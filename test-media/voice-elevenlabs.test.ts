import { dispose } from '@livekit/rtc-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { WorkerLogLine } from './support/agent-worker.js';
import type { ElevenLabsStandIn, SpeakRequest } from './support/elevenlabs-stand-in.js';
import { startElevenLabsStandIn } from './support/elevenlabs-stand-in.js';
import { eventually } from './support/eventually.js';
import type { MediaStack } from './support/media-stack.js';
import { startMediaStack } from './support/media-stack.js';
import type { ChatRequest } from './support/model-stand-in.js';
import type { SimulatedUser } from './support/simulated-user.js';
import { pcmOfWav, speak } from './support/speech.js';
import { heardOpening, requestsFrom, startCall } from './support/voice-call.js';

/** Identity values: planted in the session before the call, and one said by the user in Hindi. */
const PAN = 'ABCPE1234F';
const PHONE = '9876543210';
const SPOKEN_PAN = 'BQJPK4821L';

/** "My PAN card shows as wrong", as the user says it, and as Scribe hears it (with the PAN read out). */
const HINDI_SAID = 'मेरा पैन कार्ड गलत दिख रहा है';
const HINDI_HEARD = `मेरा पैन कार्ड ${SPOKEN_PAN} गलत दिख रहा है`;
/** "Please check the highlighted field and write your name as it is on the PAN card." */
const HINDI_ANSWER = 'कृपया हाइलाइट किया गया फ़ील्ड जांचें और अपना नाम वैसा ही लिखें जैसा पैन कार्ड पर है।';
/** "How do I upload my Aadhaar?" typed in Tamil, and its answer. */
const TAMIL_TYPED = 'என் ஆதாரை எப்படி பதிவேற்றுவது?';
const TAMIL_ANSWER = 'முன் பக்கத்தின் தெளிவான புகைப்படத்தை பதிவேற்றவும்.';

const XI_KEY = 'xi-stand-in-key';
const VOICE_ID = 'StandInHindiVoice01';
const ELEVENLABS_ENV = {
  STT_PROVIDER: 'elevenlabs',
  TTS_PROVIDER: 'elevenlabs',
  ELEVENLABS_API_KEY: XI_KEY,
  ELEVENLABS_STT_MODEL: 'scribe_v2',
  ELEVENLABS_TTS_MODEL: 'eleven_flash_v2_5',
  ELEVENLABS_VOICE_ID: VOICE_ID,
  STT_LANGUAGE: 'hi',
  ELEVENLABS_TTS_LANGUAGE: 'hi',
  // The model budget, which is also how long an utterance may wait for its first audio.
  MODEL_TIMEOUT_SECONDS: '5',
};

let eleven: ElevenLabsStandIn;
let stack: MediaStack;
const users: SimulatedUser[] = [];

const lastUserText = (request: ChatRequest) =>
  String(request.messages.filter((message) => message.role === 'user').at(-1)?.content ?? '');
const squash = (text: string) => text.replace(/\s+/g, ' ').trim();

beforeAll(async () => {
  eleven = await startElevenLabsStandIn(XI_KEY, { transcript: () => ({ text: HINDI_HEARD, languageCode: 'hin' }) });
  stack = await startMediaStack({
    models: {
      // The language model answers in the user's language.
      reply: (request) =>
        /[\u0B80-\u0BFF]/.test(lastUserText(request))
          ? TAMIL_ANSWER
          : /[\u0900-\u097F]/.test(lastUserText(request))
            ? HINDI_ANSWER
            : 'Please check the highlighted field.',
      transcript: () => 'the OpenAI-compatible transcription is not used here',
    },
    worker: { ...ELEVENLABS_ENV, ELEVENLABS_BASE_URL: eleven.baseUrl },
  });
});

afterEach(async () => {
  eleven.fail({});
  for (const user of users.splice(0)) await user.leave().catch(() => {});
});

afterAll(async () => {
  if (process.env.MEDIA_TEST_LOG)
    (await import('node:fs')).writeFileSync(process.env.MEDIA_TEST_LOG, stack?.worker.output() ?? '');
  await stack?.stop();
  await eleven?.close();
  await dispose();
});

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
    properties: { phone: PHONE },
  });
}

describe('the voice agent with ElevenLabs speech (STT_PROVIDER=elevenlabs TTS_PROVIDER=elevenlabs)', () => {
  it(
    'hears a spoken Hindi turn through the real VAD and Scribe, answers in Hindi over the ' +
      'WebSocket, and nothing raw reaches a model or the activity',
    async () => {
      const sessionId = 'voice-hindi-1';
      const { service, models, worker } = stack;
      await plantIdentityValues(sessionId);
      const openAiSpeech = models.speeches.length;
      const { user } = await startCall(service, sessionId, users);

      // The opening line is spoken by ElevenLabs: one context on the multi-context WebSocket, with the configured voice, model and language.
      await heardOpening(user);
      // The opening is the consent notice in the worker's language, Hindi here (docs/explanation/calls.md).
      const opening = await eventually(
        () => eleven.speeches.find((speech) => speech.text.includes('स्वचालित सहायक') && speech.done),
        (found) => found !== undefined,
        15_000,
      );
      expect(opening).toMatchObject({
        transport: 'websocket',
        apiKey: XI_KEY,
        voiceId: VOICE_ID,
        model: 'eleven_flash_v2_5',
        languageCode: 'hi',
      });
      expect(opening!.query.get('output_format')).toBe('pcm_22050');
      expect(opening!.query.get('enable_logging')).toBe('true');
      await eventually(
        () => user.agentAudioFrames(),
        (frames) => frames > 0,
        15_000,
      );
      // Let the opening finish playing, then measure only what answers the question.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const watch = service.watchTurns(sessionId);
      const transcriptions = requestsFrom(eleven.transcriptions);
      const chats = requestsFrom(models.chats);
      const speeches = requestsFrom(eleven.speeches);
      user.resetLoudest();

      const phrase = speak(HINDI_SAID, 'hi');
      await user.speak(phrase.samples, phrase.sampleRate);

      // The VAD cut the utterance; Scribe received it as ElevenLabs' batch API takes it, with the configured language.
      const upload = await transcriptions.next();
      expect(upload.apiKey).toBe(XI_KEY);
      expect(upload.fields).toMatchObject({ model_id: 'scribe_v2', language_code: 'hi', tag_audio_events: 'false' });
      expect(upload.query.get('enable_logging')).toBe('true');
      expect(upload).toMatchObject({ fileName: 'audio.wav', fileType: 'audio/x-wav' });
      const wav = pcmOfWav(upload.audio);
      expect(wav.samples.length / wav.sampleRate).toBeGreaterThan(1);

      // The transcript became the user's turn, with the PAN said aloud masked before the language model saw it.
      const chat = await chats.next();
      expect(lastUserText(chat)).toContain('मेरा पैन कार्ड');
      expect(lastUserText(chat)).toContain('गलत दिख रहा है');
      for (const raw of [PAN, PHONE, SPOKEN_PAN]) expect(chat.raw).not.toContain(raw);

      // ElevenLabs was asked to speak the Hindi answer with the configured voice and model, and the user heard it.
      const answer = await eventually(
        () => speeches.since().find((speech) => speech.text.includes('कृपया') && speech.done),
        (found) => found !== undefined,
        30_000,
      );
      expect(squash(answer!.text)).toBe(HINDI_ANSWER);
      expect(answer).toMatchObject({
        transport: 'websocket',
        apiKey: XI_KEY,
        voiceId: VOICE_ID,
        model: 'eleven_flash_v2_5',
        languageCode: 'hi',
      });
      await eventually(
        () => user.loudestAgentAudio(),
        (rms) => rms > 1000,
        30_000,
      );
      await eventually(
        () => squash(user.transcripts.join(' ')),
        (text) => text.includes('हाइलाइट किया गया फ़ील्ड'),
        30_000,
      );
      // No speech went to the OpenAI-compatible provider.
      expect(models.speeches.length).toBe(openAiSpeech);
      expect(models.transcriptions).toHaveLength(0);

      // Both turns reached the activity as voice_conversation_turn, with the spoken PAN masked by the service.
      await eventually(
        () => [...watch.turns.values()].map((event) => event.properties as { role: string; text: string }),
        (turns) =>
          turns.some((turn) => turn.role === 'user') &&
          turns.some((turn) => turn.role === 'agent' && turn.text.includes('कृपया')),
        30_000,
      );
      await watch.stop();
      const stored = [...watch.turns.values()].map(
        (event) => event.properties as { role: string; channel: string; text: string },
      );
      expect(stored.find((turn) => turn.role === 'user')).toMatchObject({
        channel: 'voice',
        text: expect.stringContaining('गलत दिख रहा है'),
      });
      expect(squash(stored.find((turn) => turn.role === 'agent' && turn.text.includes('कृपया'))!.text)).toBe(
        HINDI_ANSWER,
      );
      const recorded = JSON.stringify(await service.activity(sessionId, 'event'));
      expect(recorded).toContain('voice_conversation_turn');
      for (const raw of [PAN, PHONE, SPOKEN_PAN]) expect(recorded).not.toContain(raw);
      // The agent logged neither side of the conversation, and its speech deadline never fired on speech that came.
      expect(worker.output()).not.toContain(SPOKEN_PAN);
      expect(worker.output()).not.toContain('कृपया');
      expect(worker.output()).not.toContain('speech stalled');
    },
  );

  it(
    'ElevenLabs failing: Scribe answering 500, the WebSocket refusing a quota, dropping or ' +
      'stalling mid-utterance; each logged with its cause and nothing said, and the next turn is ' +
      'heard and answered aloud',
    async () => {
      const sessionId = 'voice-faults-1';
      const { service, models, worker } = stack;
      const { user } = await startCall(service, sessionId, users);
      await heardOpening(user);
      await eventually(
        () => user.agentAudioFrames(),
        (frames) => frames > 0,
        15_000,
      );
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const modelErrors = () => worker.logOf(sessionId).filter((line) => line.msg === 'model error');
      /** Fails until the turn is given up (`done`: the error that says so), then recovers. */
      const givenUp = async (errorsBefore: number, cause: RegExp, done: (line: WorkerLogLine) => boolean) => {
        const errors = await eventually(
          () => modelErrors().slice(errorsBefore),
          (lines) => lines.some(done),
          45_000,
        );
        for (const error of errors) expect(String(error.cause)).toMatch(cause);
        eleven.fail({});
      };
      const spokenAnswer = async (speeches: ReturnType<typeof requestsFrom<SpeakRequest>>) => {
        const answer = await eventually(
          () => speeches.since().find((speech) => speech.text.includes('कृपया') && speech.done),
          (found) => found !== undefined,
          30_000,
        );
        expect(squash(answer!.text)).toBe(HINDI_ANSWER);
      };

      // Scribe fails: the spoken turn is lost after the plugin's retries (logged, and the call goes
      // on: agent/elevenlabs-resilience.ts), and the next one is heard and answered.
      let errorsBefore = modelErrors().length;
      let chats = requestsFrom(models.chats);
      const uploads = requestsFrom(eleven.transcriptions);
      eleven.fail({ scribe: 'error' });
      const phrase = speak(HINDI_SAID, 'hi');
      await user.speak(phrase.samples, phrase.sampleRate);
      await givenUp(errorsBefore, /ElevenLabs/, (line) => line.kind === 'stt_error');
      expect(uploads.since().length).toBeGreaterThanOrEqual(2);
      expect(chats.since()).toHaveLength(0);
      let speeches = requestsFrom(eleven.speeches);
      await user.speak(phrase.samples, phrase.sampleRate);
      expect(lastUserText(await chats.next())).toContain('गलत दिख रहा है');
      await spokenAnswer(speeches);

      // The WebSocket fails: the answer is not spoken (logged), and the next one is, on a new connection.
      const stalls = () => worker.logOf(sessionId).filter((line) => line.msg.startsWith('speech stalled'));
      for (const fault of ['error', 'drop', 'stall'] as const) {
        await new Promise((resolve) => setTimeout(resolve, 3000));
        errorsBefore = modelErrors().length;
        const stallsBefore = stalls().length;
        chats = requestsFrom(models.chats);
        eleven.fail({ speech: fault });
        await user.type(`${HINDI_SAID} (${fault})`);
        await chats.next();
        if (fault === 'stall') {
          // Nothing comes back, not even an error: the agent's deadline (MODEL_TIMEOUT_SECONDS) closes the connection.
          await eventually(
            () => stalls().length,
            (count) => count > stallsBefore,
            30_000,
          );
          eleven.fail({});
        } else {
          // The framework retries the speech, then gives the answer up (an error it does not retry).
          await givenUp(
            errorsBefore,
            fault === 'error' ? /synthesize|quota/i : /closed|connection|synthesize/i,
            (line) => line.kind === 'tts_error' && line.recoverable === false,
          );
        }
        speeches = requestsFrom(eleven.speeches);
        user.resetLoudest();
        await user.type(HINDI_SAID);
        await spokenAnswer(speeches);
        await eventually(
          () => user.loudestAgentAudio(),
          (rms) => rms > 1000,
          30_000,
        );
      }

      // The job went on throughout, and its log holds neither side of the conversation.
      expect(user.agents()).toHaveLength(1);
      expect((await service.session(sessionId)).active).toBe(true);
      const logged = JSON.stringify(worker.logOf(sessionId));
      expect(logged).not.toContain('job ended');
      for (const said of [SPOKEN_PAN, 'गलत', 'कृपया']) expect(logged).not.toContain(said);
    },
  );

  it('speaks over HTTP with ELEVENLABS_TTS_TRANSPORT=http (eleven_v3, which the WebSocket does not serve): a typed Tamil turn is answered aloud', async () => {
    const sessionId = 'voice-tamil-1';
    await stack.worker.stop();
    const worker = await stack.replaceWorker({
      ...ELEVENLABS_ENV,
      ELEVENLABS_BASE_URL: eleven.baseUrl,
      ELEVENLABS_TTS_MODEL: 'eleven_v3',
      ELEVENLABS_TTS_TRANSPORT: 'http',
      ELEVENLABS_TTS_LANGUAGE: '',
    });
    const { service } = stack;
    const { user } = await startCall(service, sessionId, users);
    await heardOpening(user);
    await eventually(
      () => user.agentAudioFrames(),
      (frames) => frames > 0,
      15_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const speeches = requestsFrom(eleven.speeches);
    user.resetLoudest();

    await user.type(TAMIL_TYPED);

    const answer = await eventually(
      () => speeches.since().find((speech) => speech.text.includes('பதிவேற்றவும்') && speech.done),
      (found) => found !== undefined,
      30_000,
    );
    expect(answer).toMatchObject({
      transport: 'http',
      apiKey: XI_KEY,
      voiceId: VOICE_ID,
      model: 'eleven_v3',
      languageCode: undefined,
    });
    expect(squash(answer!.text)).toBe(TAMIL_ANSWER);
    expect(answer!.query.get('output_format')).toBe('pcm_22050');
    await eventually(
      () => user.loudestAgentAudio(),
      (rms) => rms > 1000,
      30_000,
    );
    await eventually(
      () => user.transcripts.join(' '),
      (text) => text.includes('பதிவேற்றவும்'),
      30_000,
    );
    expect(worker.output()).not.toContain(TAMIL_TYPED);
  });
});
