import { describe, expect, it } from 'vitest';
import { AgentSettingsError, loadAgentSettings } from '../../agent/settings.js';
import { loadConfig } from '../../src/config.js';
import { DEFAULT_RELAY_PORT } from '../../src/config/inspection-setting.js';

const BASE = { LIVEKIT_URL: 'ws://127.0.0.1:7880', LIVEKIT_API_KEY: 'devkey', LIVEKIT_API_SECRET: 'secret' };

/** The message a bad environment stops the agent with. */
function refusal(env: Record<string, string>): string {
  try {
    loadAgentSettings({ ...BASE, ...env });
  } catch (error) {
    expect(error).toBeInstanceOf(AgentSettingsError);
    return (error as Error).message;
  }
  throw new Error('the settings were accepted');
}

describe('the voice agent settings: speech providers', () => {
  it('keeps OpenAI-compatible speech by default, with the documented models', () => {
    const settings = loadAgentSettings({ ...BASE, MODEL_BASE_URL: 'http://127.0.0.1:9000/v1', MODEL_API_KEY: 'k' });
    expect(settings.stt).toEqual({
      provider: 'openai',
      baseURL: 'http://127.0.0.1:9000/v1',
      apiKey: 'k',
      model: 'whisper-1',
      language: undefined,
    });
    expect(settings.tts).toEqual({
      provider: 'openai',
      baseURL: 'http://127.0.0.1:9000/v1',
      apiKey: 'k',
      model: 'tts-1',
      voice: 'alloy',
    });
    expect(settings.llm).toEqual({
      provider: 'openai',
      baseURL: 'http://127.0.0.1:9000/v1',
      apiKey: 'k',
      model: 'gpt-4o-mini',
    });
  });

  it('takes ElevenLabs for speech with its key, base URL, models, voice and languages, and leaves the language model where it was', () => {
    const settings = loadAgentSettings({
      ...BASE,
      STT_PROVIDER: 'elevenlabs',
      TTS_PROVIDER: 'elevenlabs',
      ELEVENLABS_API_KEY: 'xi-key',
      ELEVENLABS_BASE_URL: 'http://127.0.0.1:9100/v1/',
      ELEVENLABS_VOICE_ID: 'Voice4Hindi01',
      STT_LANGUAGE: 'hi',
      ELEVENLABS_TTS_LANGUAGE: 'hi',
      ELEVENLABS_ENABLE_LOGGING: 'false',
      LLM_BASE_URL: 'https://llm.example/v1',
      LLM_MODEL: 'indic-chat',
    });
    const account = { apiKey: 'xi-key', baseURL: 'http://127.0.0.1:9100/v1', enableLogging: false };
    expect(settings.stt).toEqual({ provider: 'elevenlabs', model: 'scribe_v2', language: 'hi', account });
    expect(settings.tts).toEqual({
      provider: 'elevenlabs',
      model: 'eleven_flash_v2_5',
      voiceId: 'Voice4Hindi01',
      language: 'hi',
      transport: 'websocket',
      account,
    });
    expect(settings.llm).toMatchObject({ baseURL: 'https://llm.example/v1', model: 'indic-chat' });
  });

  it('chooses each modality on its own: ElevenLabs listening, OpenAI speaking', () => {
    const settings = loadAgentSettings({
      ...BASE,
      STT_PROVIDER: 'elevenlabs',
      ELEVENLABS_API_KEY: 'xi-key',
      TTS_VOICE: 'nova',
    });
    expect(settings.stt).toMatchObject({
      provider: 'elevenlabs',
      account: { baseURL: 'https://api.elevenlabs.io/v1', enableLogging: true },
    });
    expect(settings.tts).toMatchObject({ provider: 'openai', voice: 'nova' });
  });

  it('lets eleven_v3 speak over HTTP', () => {
    const settings = loadAgentSettings({
      ...BASE,
      TTS_PROVIDER: 'elevenlabs',
      ELEVENLABS_API_KEY: 'k',
      ELEVENLABS_TTS_MODEL: 'eleven_v3',
      ELEVENLABS_TTS_TRANSPORT: 'http',
    });
    expect(settings.tts).toMatchObject({ provider: 'elevenlabs', model: 'eleven_v3', transport: 'http' });
  });

  it('refuses a provider it does not know', () => {
    expect(refusal({ STT_PROVIDER: 'sarvam' })).toContain('STT_PROVIDER: must be local, openai or elevenlabs');
    expect(refusal({ TTS_PROVIDER: 'ElevenLabs ' })).toContain('TTS_PROVIDER: must be local, openai or elevenlabs');
    expect(refusal({ LLM_PROVIDER: 'local' })).toContain('LLM_PROVIDER: must be none or openai');
  });

  it('refuses ElevenLabs without its key, naming the variable', () => {
    expect(refusal({ TTS_PROVIDER: 'elevenlabs' })).toContain(
      'ELEVENLABS_API_KEY: required when STT_PROVIDER or TTS_PROVIDER is elevenlabs',
    );
    expect(refusal({ STT_PROVIDER: 'elevenlabs', ELEVENLABS_API_KEY: '   ' })).toContain(
      'ELEVENLABS_API_KEY: required',
    );
  });

  it('refuses an OpenAI setting left beside an ElevenLabs modality, naming each one', () => {
    const message = refusal({
      STT_PROVIDER: 'elevenlabs',
      TTS_PROVIDER: 'elevenlabs',
      ELEVENLABS_API_KEY: 'k',
      STT_MODEL: 'whisper-1',
      TTS_VOICE: 'alloy',
      TTS_BASE_URL: 'http://127.0.0.1:1/v1',
    });
    expect(message).toContain('STT_MODEL: applies to STT_PROVIDER=openai');
    expect(message).toContain('TTS_VOICE: applies to TTS_PROVIDER=openai');
    expect(message).toContain('TTS_BASE_URL: applies to TTS_PROVIDER=openai');
  });

  it('refuses a realtime speech-to-text model, which would bypass the VAD', () => {
    expect(
      refusal({ STT_PROVIDER: 'elevenlabs', ELEVENLABS_API_KEY: 'k', ELEVENLABS_STT_MODEL: 'scribe_v2_realtime' }),
    ).toContain('ELEVENLABS_STT_MODEL: a realtime model');
  });

  it('refuses eleven_v3 over the WebSocket, which does not serve it', () => {
    expect(
      refusal({ TTS_PROVIDER: 'elevenlabs', ELEVENLABS_API_KEY: 'k', ELEVENLABS_TTS_MODEL: 'eleven_v3' }),
    ).toContain('ELEVENLABS_TTS_MODEL: eleven_v3 is not served over');
  });

  it('refuses bad addresses, languages, voices and switches with the variable named', () => {
    expect(refusal({ ELEVENLABS_BASE_URL: 'api.elevenlabs.io/v1' })).toContain(
      'ELEVENLABS_BASE_URL: must be an http:// or https:// URL',
    );
    expect(refusal({ STT_LANGUAGE: 'Hindi language' })).toContain('STT_LANGUAGE: must be a language code');
    expect(refusal({ ELEVENLABS_TTS_LANGUAGE: 'hi_IN_x_y' })).toContain(
      'ELEVENLABS_TTS_LANGUAGE: must be a language code',
    );
    expect(refusal({ ELEVENLABS_VOICE_ID: 'voice/../x' })).toContain('ELEVENLABS_VOICE_ID: must be a voice id');
    expect(refusal({ ELEVENLABS_TTS_TRANSPORT: 'grpc' })).toContain(
      'ELEVENLABS_TTS_TRANSPORT: must be websocket or http',
    );
    expect(refusal({ ELEVENLABS_ENABLE_LOGGING: 'no' })).toContain('ELEVENLABS_ENABLE_LOGGING');
  });

  it('names every problem at once', () => {
    const message = refusal({
      STT_PROVIDER: 'elevenlabs',
      ELEVENLABS_API_KEY: 'k',
      ELEVENLABS_STT_MODEL: 'scribe_v2_realtime',
      STT_LANGUAGE: '??',
      ELEVENLABS_VOICE_ID: '-',
    });
    for (const name of ['ELEVENLABS_STT_MODEL', 'STT_LANGUAGE', 'ELEVENLABS_VOICE_ID'])
      expect(message).toContain(`${name}:`);
  });
});

describe('the voice agent settings: the local voice', () => {
  it('speaks, listens and answers locally when no key or endpoint is set anywhere', () => {
    const settings = loadAgentSettings(BASE);
    expect(settings.stt).toEqual({ provider: 'local', modelDir: '/usr/share/pocketsphinx/model/en-us' });
    expect(settings.tts).toEqual({ provider: 'local', voice: 'en-us', speed: 165 });
    expect(settings.llm).toEqual({ provider: 'none' });
  });

  it('switches each part to its provider when a key or endpoint for it is set, as before', () => {
    const llmOnly = loadAgentSettings({ ...BASE, LLM_API_KEY: 'k' });
    expect(llmOnly.llm).toMatchObject({ provider: 'openai', apiKey: 'k', model: 'gpt-4o-mini' });
    expect(llmOnly.stt.provider).toBe('local');
    expect(llmOnly.tts.provider).toBe('local');
    const speechOnly = loadAgentSettings({ ...BASE, STT_API_KEY: 'k', TTS_BASE_URL: 'http://127.0.0.1:9/v1' });
    expect(speechOnly.stt.provider).toBe('openai');
    expect(speechOnly.tts.provider).toBe('openai');
    expect(speechOnly.llm).toEqual({ provider: 'none' });
    const forced = loadAgentSettings({ ...BASE, MODEL_API_KEY: 'k', STT_PROVIDER: 'local', LLM_PROVIDER: 'none' });
    expect(forced.stt.provider).toBe('local');
    expect(forced.tts.provider).toBe('openai');
    expect(forced.llm).toEqual({ provider: 'none' });
  });

  it('speaks the Indian languages espeak-ng has by their codes, and takes any espeak-ng voice', () => {
    for (const code of ['hi', 'bn', 'gu', 'kn', 'ml', 'mr', 'pa', 'ta', 'te', 'or', 'ur', 'as']) {
      expect(loadAgentSettings({ ...BASE, LOCAL_TTS_VOICE: code }).tts).toMatchObject({
        provider: 'local',
        voice: code,
      });
    }
    expect(loadAgentSettings({ ...BASE, LOCAL_TTS_VOICE: 'en-gb+f3', LOCAL_TTS_SPEED: '140' }).tts).toEqual({
      provider: 'local',
      voice: 'en-gb+f3',
      speed: 140,
    });
  });

  it('refuses what the local voice cannot do, naming the variable', () => {
    expect(refusal({ STT_LANGUAGE: 'hi' })).toContain(
      'STT_LANGUAGE: the local recogniser (pocketsphinx-en-us) understands English only',
    );
    expect(refusal({ LOCAL_TTS_VOICE: 'en us; rm' })).toContain('LOCAL_TTS_VOICE: must be an espeak-ng voice');
    expect(refusal({ LOCAL_TTS_SPEED: '2000' })).toContain('LOCAL_TTS_SPEED');
  });
});

describe('the voice agent settings: ports', () => {
  it("listens by default on a port none of the first call's other programs takes: the service, its inspector relay, LiveKit", () => {
    const { worker } = loadAgentSettings(BASE);
    const taken = [loadConfig({}).http.port, DEFAULT_RELAY_PORT, Number(new URL(BASE.LIVEKIT_URL).port)];
    expect(taken).not.toContain(worker.httpPort);
    expect(worker.httpHost).toBe('127.0.0.1');
  });
});

describe('the voice agent settings: a person taking over (docs/explanation/handoff.md)', () => {
  it('waits two minutes for an operator and stays silent once one joins, by default; either can be set', () => {
    expect(loadAgentSettings(BASE).handoff).toEqual({ timeoutMs: 120_000, onOperator: 'silent' });
    expect(loadAgentSettings({ ...BASE, HANDOFF_TIMEOUT_SECONDS: '30', AGENT_ON_OPERATOR: 'leave' }).handoff).toEqual({
      timeoutMs: 30_000,
      onOperator: 'leave',
    });
  });

  it('refuses a wait out of range and an unknown step back, naming them', () => {
    expect(refusal({ HANDOFF_TIMEOUT_SECONDS: '2' })).toMatch(/HANDOFF_TIMEOUT_SECONDS/);
    expect(refusal({ AGENT_ON_OPERATOR: 'hang up' })).toMatch(/AGENT_ON_OPERATOR: must be silent or leave/);
  });
});
