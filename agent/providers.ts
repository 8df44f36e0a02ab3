import type { stt } from '@livekit/agents';
import { tokenize, tts as ttsBase } from '@livekit/agents';
import * as elevenlabs from '@livekit/agents-plugin-elevenlabs';
import * as openai from '@livekit/agents-plugin-openai';
import type { AgentSettings, SttSettings, TtsSettings } from './settings.js';

type SttError = Parameters<stt.STTCallbacks['error']>[0];

/**
 * ElevenLabs' Scribe with one lost utterance kept from ending the call. The plugin reports an
 * utterance it could not transcribe (after its retries) as an unrecoverable error, and the
 * framework ends the whole session on an unrecoverable speech-to-text error (it counts only
 * language- and speech-model errors against a limit). The next utterance is sent anew either
 * way, as with the OpenAI-compatible STT, which reports none: so the error is passed on as
 * recoverable, and still logged with its cause ('model error', agent/job.ts).
 */
class ScribeStt extends elevenlabs.STT {
  override emit<E extends keyof stt.STTCallbacks>(event: E, ...args: Parameters<stt.STTCallbacks[E]>): boolean {
    if (event !== 'error') return super.emit(event, ...args);
    const [error] = args as [SttError];
    return super.emit('error', { ...error, recoverable: true });
  }
}

/**
 * Speech-to-text, chosen by STT_PROVIDER (docs/voice-agent.md, "Providers"). Both run one
 * request per utterance, cut by the agent's VAD: the framework wraps a non-streaming STT so.
 */
function createStt(settings: SttSettings, timeoutMs: number) {
  if (settings.provider === 'elevenlabs') {
    return new ScribeStt({
      apiKey: settings.account.apiKey,
      baseURL: settings.account.baseURL,
      model: settings.model,
      enableLogging: settings.account.enableLogging,
      // Audio events ("(laughter)") are no words of the user's turn.
      tagAudioEvents: false,
      ...(settings.language ? { languageCode: settings.language } : {}),
      // The plugin's upload has no deadline of its own: each attempt gets the model budget.
      httpSession: { fetch: (input, init) => fetch(input, { ...init, signal: withDeadline(init?.signal, timeoutMs) }) },
    });
  }
  return new openai.STT({
    baseURL: settings.baseURL,
    apiKey: settings.apiKey,
    model: settings.model,
    useRealtime: false,
    ...(settings.language ? { language: settings.language } : { detectLanguage: true }),
  });
}

/**
 * ElevenLabs' WebSocket speech with a deadline. The plugin waits for an utterance's audio with no
 * deadline of its own, on one connection it keeps for the whole call: a connection that stops
 * answering (a stalled server, a half-open socket) would leave that answer and every later one
 * unspoken. An utterance whose text went out and no audio came back within the model budget
 * closes the connection (`onStall` says so): that utterance fails as a TTS error, and the next one
 * opens a new connection.
 */
class DeadlineSpeech extends elevenlabs.TTS {
  readonly #timeoutMs: number;
  readonly #onStall: () => void;

  constructor(options: elevenlabs.TTSOptions, timeoutMs: number, onStall: () => void) {
    super(options);
    this.#timeoutMs = timeoutMs;
    this.#onStall = onStall;
  }

  override stream(options?: Parameters<elevenlabs.TTS['stream']>[0]): ReturnType<elevenlabs.TTS['stream']> {
    const stream = super.stream(options);
    let deadline: NodeJS.Timeout | undefined;
    const settled = () => clearTimeout(deadline);
    const [pushText, pushAudio, close] = [stream.pushText.bind(stream), stream.pushAudio.bind(stream), stream.close.bind(stream)];
    stream.pushText = (text) => {
      if (deadline === undefined && text.trim() !== '') {
        deadline = setTimeout(() => {
          this.#onStall();
          void this.close();
        }, this.#timeoutMs);
        deadline.unref();
      }
      pushText(text);
    };
    stream.pushAudio = (data) => {
      settled();
      pushAudio(data);
    };
    stream.close = () => {
      settled();
      close();
    };
    return stream;
  }
}

/**
 * Text-to-speech, chosen by TTS_PROVIDER. ElevenLabs speaks over its WebSocket (text streamed in
 * as the model writes it), or with ELEVENLABS_TTS_TRANSPORT=http one HTTP request per sentence,
 * which the framework's stream adapter cuts: the models the WebSocket does not serve need that.
 */
function createTts(settings: TtsSettings, timeoutMs: number, onStall: () => void) {
  if (settings.provider === 'elevenlabs') {
    const options: elevenlabs.TTSOptions = {
      apiKey: settings.account.apiKey,
      baseURL: settings.account.baseURL,
      model: settings.model,
      enableLogging: settings.account.enableLogging,
      ...(settings.voiceId ? { voiceId: settings.voiceId } : {}),
      ...(settings.language ? { language: settings.language } : {}),
    };
    // Over HTTP each sentence is its own request, with no deadline either (neither the plugin nor
    // the framework sets one), but one that stalls holds up only its answer until the user's next
    // turn interrupts it; the next request does not wait on it.
    if (settings.transport === 'http') return new ttsBase.StreamAdapter(new elevenlabs.TTS(options), new tokenize.basic.SentenceTokenizer());
    return new DeadlineSpeech(options, timeoutMs, onStall);
  }
  return new openai.TTS({ baseURL: settings.baseURL, apiKey: settings.apiKey, model: settings.model, voice: settings.voice as openai.TTSOptions['voice'] });
}

function withDeadline(signal: AbortSignal | null | undefined, timeoutMs: number): AbortSignal {
  const deadline = AbortSignal.timeout(timeoutMs);
  return signal ? AbortSignal.any([signal, deadline]) : deadline;
}

/**
 * The three models of the voice pipeline. The language model is always an OpenAI-compatible
 * endpoint (docs/voice-agent.md lists ones strong in Indian languages); speech goes to the
 * provider each modality is set to.
 */
export function createModels(settings: AgentSettings, onSpeechStall: () => void) {
  const llm = new openai.LLM({ baseURL: settings.llm.baseURL, apiKey: settings.llm.apiKey, model: settings.llm.model });
  return { llm, stt: createStt(settings.stt, settings.modelTimeoutMs), tts: createTts(settings.tts, settings.modelTimeoutMs, onSpeechStall) };
}
