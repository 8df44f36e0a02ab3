import * as openai from '@livekit/agents-plugin-openai';
import type { AgentSettings } from './settings.js';

/**
 * The three models of the voice pipeline, each at an OpenAI-compatible endpoint of its own
 * (docs/voice-agent.md lists providers that speak this API, Indian-language ones among them).
 * Speech-to-text runs per utterance, cut by the VAD, through /v1/audio/transcriptions.
 */
export function createModels(settings: AgentSettings) {
  const llm = new openai.LLM({ baseURL: settings.llm.baseURL, apiKey: settings.llm.apiKey, model: settings.llm.model });
  const stt = new openai.STT({
    baseURL: settings.stt.baseURL,
    apiKey: settings.stt.apiKey,
    model: settings.stt.model,
    useRealtime: false,
    ...(settings.stt.language ? { language: settings.stt.language } : { detectLanguage: true }),
  });
  const tts = new openai.TTS({ baseURL: settings.tts.baseURL, apiKey: settings.tts.apiKey, model: settings.tts.model, voice: settings.tts.voice as openai.TTSOptions['voice'] });
  return { llm, stt, tts };
}
