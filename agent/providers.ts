import { tokenize, tts as ttsBase } from '@livekit/agents';
import * as elevenlabs from '@livekit/agents-plugin-elevenlabs';
import * as openai from '@livekit/agents-plugin-openai';
import { DeadlineSpeech, ScribeStt } from './elevenlabs-resilience.js';
import { createLocalTts } from './local-voice/espeak-tts.js';
import { PocketsphinxStt } from './local-voice/pocketsphinx-stt.js';
import type { AgentSettings, SttSettings, TtsSettings } from './settings.js';

/**
 * Speech-to-text, chosen by STT_PROVIDER (docs/reference/voice-agent.md, "Providers"). Both run one
 * request per utterance, cut by the agent's VAD: the framework wraps a non-streaming STT so.
 */
function createStt(settings: SttSettings, timeoutMs: number, onNothingHeard: () => void) {
  if (settings.provider === 'local')
    return new PocketsphinxStt({ modelDir: settings.modelDir, timeoutMs, onNothingHeard });
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
 * Text-to-speech, chosen by TTS_PROVIDER. ElevenLabs speaks over its WebSocket (text streamed in
 * as the model writes it), or with ELEVENLABS_TTS_TRANSPORT=http one HTTP request per sentence,
 * which the framework's stream adapter cuts: the models the WebSocket does not serve need that.
 */
function createTts(settings: TtsSettings, timeoutMs: number, onStall: () => void) {
  if (settings.provider === 'local') return createLocalTts({ voice: settings.voice, speed: settings.speed });
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
    if (settings.transport === 'http')
      return new ttsBase.StreamAdapter(new elevenlabs.TTS(options), new tokenize.basic.SentenceTokenizer());
    return new DeadlineSpeech(options, timeoutMs, onStall);
  }
  return new openai.TTS({
    baseURL: settings.baseURL,
    apiKey: settings.apiKey,
    model: settings.model,
    voice: settings.voice as openai.TTSOptions['voice'],
  });
}

function withDeadline(signal: AbortSignal | null | undefined, timeoutMs: number): AbortSignal {
  const deadline = AbortSignal.timeout(timeoutMs);
  return signal ? AbortSignal.any([signal, deadline]) : deadline;
}

/**
 * The models of the voice pipeline. The language model is an OpenAI-compatible endpoint
 * (docs/reference/voice-agent.md lists ones strong in Indian languages), or none, and then the scripted
 * dialog answers; speech goes to the provider each modality is set to, local by default.
 */
export function createModels(
  settings: AgentSettings,
  onSpeechStall: () => void,
  onNothingHeard: () => void = () => undefined,
) {
  const llm =
    settings.llm.provider === 'openai'
      ? new openai.LLM({ baseURL: settings.llm.baseURL, apiKey: settings.llm.apiKey, model: settings.llm.model })
      : undefined;
  return {
    llm,
    stt: createStt(settings.stt, settings.modelTimeoutMs, onNothingHeard),
    tts: createTts(settings.tts, settings.modelTimeoutMs, onSpeechStall),
  };
}

/** What runs where, for the worker's first log line: never a key or an address. */
export function describeModels(settings: AgentSettings): { stt: string; tts: string; llm: string; local: boolean } {
  const stt = settings.stt.provider === 'local' ? 'local (pocketsphinx, en-us grammar)' : settings.stt.provider;
  const tts = settings.tts.provider === 'local' ? `local (espeak-ng ${settings.tts.voice})` : settings.tts.provider;
  const llm = settings.llm.provider === 'none' ? 'none (scripted dialog)' : 'openai-compatible';
  return {
    stt,
    tts,
    llm,
    local: settings.stt.provider === 'local' && settings.tts.provider === 'local' && settings.llm.provider === 'none',
  };
}
