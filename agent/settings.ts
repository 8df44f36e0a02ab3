import { z } from 'zod';
import type { RefreshPolicy } from '../src/domain/refresh-policy.js';
import { DEFAULT_REFRESH_POLICY } from '../src/domain/refresh-policy.js';
import { ESPEAK_VOICES } from './local-voice/espeak-tts.js';
import { DEBIAN_MODEL_DIR } from './local-voice/pocketsphinx-stt.js';

/** Empty strings count as unset, as in the service's own configuration. */
const optional = z.string().trim().min(1).optional();
const seconds = (fallback: number) => z.coerce.number().nonnegative().default(fallback);
const flag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0'])
    .transform((raw) => raw === 'true' || raw === '1')
    .default(fallback);
const httpUrl = z.string().regex(/^https?:\/\/[^\s/]+/, { error: 'must be an http:// or https:// URL' });
/** ISO 639-1 (`hi`) or 639-3 (`hin`), with an optional region (`hi-IN`). */
const languageCode = z
  .string()
  .trim()
  .regex(/^[a-z]{2,3}(?:[-_][a-z0-9]{2,8})?$/i, { error: 'must be a language code such as hi, ta, hin or hi-IN' })
  .optional();
/** Unset, a modality is local unless one of its OpenAI-compatible settings is given (see loadAgentSettings). */
const provider = z.enum(['local', 'openai', 'elevenlabs'], { error: 'must be local, openai or elevenlabs' }).optional();

/** ElevenLabs' public API; the plugin derives its WebSocket address from it (https → wss). */
const ELEVENLABS_DEFAULT_BASE_URL = 'https://api.elevenlabs.io/v1';

type Given = Partial<Record<string, unknown>>;
const anySet = (e: Given, names: string[]) => names.some((name) => e[name] !== undefined);
/**
 * Unset, each part is local unless something of an OpenAI-compatible endpoint for it is set: with
 * no key anywhere the agent speaks, listens and answers on this machine (docs/reference/voice-agent.md, "Local voice").
 */
const defaults = (e: Given) => {
  const shared = anySet(e, ['MODEL_BASE_URL', 'MODEL_API_KEY']);
  return {
    stt: shared || anySet(e, ['STT_BASE_URL', 'STT_API_KEY', 'STT_MODEL']) ? ('openai' as const) : ('local' as const),
    tts:
      shared || anySet(e, ['TTS_BASE_URL', 'TTS_API_KEY', 'TTS_MODEL', 'TTS_VOICE'])
        ? ('openai' as const)
        : ('local' as const),
    llm: shared || anySet(e, ['LLM_BASE_URL', 'LLM_API_KEY', 'LLM_MODEL']) ? ('openai' as const) : ('none' as const),
  };
};

/** AGENT_MAX_JOBS when unset: running jobs at which the worker reports itself full (the jobs load measure). */
export const DEFAULT_AGENT_MAX_JOBS = 8;

const EnvSchema = z
  .object({
    LIVEKIT_URL: z
      .string()
      .regex(/^(wss?|https?):\/\/[^\s/]+/, { error: 'must be a ws://, wss://, http:// or https:// URL' }),
    LIVEKIT_API_KEY: z.string().min(1),
    LIVEKIT_API_SECRET: z.string().min(1),
    VOICE_AGENT_NAME: z.string().trim().min(1).max(128).default('kyc-voice-agent'),
    // The service the agent reads its context from and reports turns to.
    SERVICE_URL: httpUrl.default('http://127.0.0.1:8080'),
    SERVICE_API_KEY: optional,
    SERVICE_TIMEOUT_SECONDS: z.coerce.number().positive().default(5),
    SERVICE_RETRY_MAX_SECONDS: z.coerce.number().positive().default(30),
    // Used until the service serves its own refresh policy with the context.
    VOICE_CONTEXT_REFRESH_SECONDS: seconds(DEFAULT_REFRESH_POLICY.interval_seconds),
    VOICE_CONTEXT_REFRESH_ON_USER_TURN: flag(DEFAULT_REFRESH_POLICY.on_user_turn),
    VOICE_CONTEXT_REFRESH_MIN_INTERVAL_SECONDS: seconds(DEFAULT_REFRESH_POLICY.min_interval_seconds),
    // Which plugin speaks and listens: on this machine (espeak-ng, pocketsphinx), OpenAI-compatible
    // endpoints, or ElevenLabs; and whether a language model answers or the scripted dialog does.
    STT_PROVIDER: provider,
    TTS_PROVIDER: provider,
    LLM_PROVIDER: z.enum(['none', 'openai'], { error: 'must be none or openai' }).optional(),
    // The local voice (docs/reference/voice-agent.md, "Local voice").
    LOCAL_TTS_VOICE: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9+_-]{1,40}$/, {
        error: 'must be an espeak-ng voice such as en-us, hi or en-gb+f3, or a language code',
      })
      .default('en'),
    LOCAL_TTS_SPEED: z.coerce.number().int().min(80).max(450).default(165),
    POCKETSPHINX_MODEL_DIR: z.string().trim().min(1).default(DEBIAN_MODEL_DIR),
    // OpenAI-compatible endpoints; MODEL_* is the default of each of the three.
    MODEL_BASE_URL: optional,
    MODEL_API_KEY: optional,
    MODEL_TIMEOUT_SECONDS: z.coerce.number().positive().default(15),
    HANDOFF_TIMEOUT_SECONDS: z.coerce
      .number()
      .int({ error: 'must be a whole number of seconds' })
      .min(5)
      .max(3600)
      .default(120),
    AGENT_ON_OPERATOR: z.enum(['silent', 'leave'], { error: 'must be silent or leave' }).default('silent'),
    LLM_BASE_URL: optional,
    LLM_API_KEY: optional,
    LLM_MODEL: optional,
    // Defaults of the STT_* and TTS_* models are applied below, for the OpenAI provider only.
    STT_BASE_URL: optional,
    STT_API_KEY: optional,
    STT_MODEL: optional,
    /** The language users speak, for either provider; unset, the model detects it. */
    STT_LANGUAGE: languageCode,
    TTS_BASE_URL: optional,
    TTS_API_KEY: optional,
    TTS_MODEL: optional,
    TTS_VOICE: optional,
    // ElevenLabs, when a provider above is `elevenlabs`.
    ELEVENLABS_API_KEY: optional,
    ELEVENLABS_BASE_URL: httpUrl.default(ELEVENLABS_DEFAULT_BASE_URL),
    ELEVENLABS_STT_MODEL: z
      .string()
      .trim()
      .min(1)
      .refine((model) => !model.includes('realtime'), {
        error:
          'a realtime model finds turns on its own; the agent cuts each utterance with its VAD and needs a batch model such as scribe_v2 or scribe_v1',
      })
      .default('scribe_v2'),
    ELEVENLABS_TTS_MODEL: z.string().trim().min(1).default('eleven_flash_v2_5'),
    ELEVENLABS_VOICE_ID: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9]+$/, { error: 'must be a voice id (letters and digits), as in the ElevenLabs voice library' })
      .optional(),
    /** Forces the language of speech; only the Flash and Turbo v2.5 models accept it. */
    ELEVENLABS_TTS_LANGUAGE: languageCode,
    ELEVENLABS_TTS_TRANSPORT: z
      .enum(['websocket', 'http'], { error: 'must be websocket or http' })
      .default('websocket'),
    /** false asks ElevenLabs to keep nothing of the call (its zero retention mode, for accounts that have it). */
    ELEVENLABS_ENABLE_LOGGING: flag(true),
    // The worker itself.
    // The worker's health endpoint: loopback unless told otherwise, as the service. 8082: the service
    // takes 8080 and its inspector relay 8081, and all three run together for a first call.
    AGENT_HTTP_HOST: z.string().trim().min(1).default('127.0.0.1'),
    AGENT_HTTP_PORT: z.coerce.number().int().min(0).max(65_535).default(8082),
    // Warm job processes: one per job the worker takes unless told otherwise, so a burst up to
    // AGENT_MAX_JOBS finds each its process (docs/reference/voice-agent.md, "Starting jobs fast").
    AGENT_IDLE_PROCESSES: z.coerce.number().int().min(1).max(64).optional(),
    AGENT_LOAD_THRESHOLD: z.coerce.number().positive().optional(),
    // What the worker reports as its load: its running jobs (the default), or the machine's CPU use.
    // docs/reference/voice-agent.md, "Load and capacity".
    AGENT_LOAD_MEASURE: z.enum(['jobs', 'cpu']).default('jobs'),
    // Capacity by job count: with the jobs measure, the worker is full at this many running jobs.
    AGENT_MAX_JOBS: z.coerce.number().int().positive().default(DEFAULT_AGENT_MAX_JOBS),
    AGENT_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace']).default('info'),
    /** The service's inspection relay (`ws://…`): the scripted dialog shows in the Stately inspector. */
    AGENT_INSPECT: z
      .string()
      .trim()
      .regex(/^wss?:\/\/[^\s/]+/, { error: 'must be the ws:// or wss:// address of an inspection relay' })
      .optional(),
  })
  .superRefine((e, ctx) => {
    const problem = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if ((e.STT_PROVIDER === 'elevenlabs' || e.TTS_PROVIDER === 'elevenlabs') && e.ELEVENLABS_API_KEY === undefined) {
      problem('ELEVENLABS_API_KEY', 'required when STT_PROVIDER or TTS_PROVIDER is elevenlabs');
    }
    // A leftover OpenAI setting would silently do nothing: say which variable the provider reads instead.
    const openAiOnly = {
      STT: ['STT_BASE_URL', 'STT_API_KEY', 'STT_MODEL'],
      TTS: ['TTS_BASE_URL', 'TTS_API_KEY', 'TTS_MODEL', 'TTS_VOICE'],
    } as const;
    for (const modality of ['STT', 'TTS'] as const) {
      if (e[`${modality}_PROVIDER`] !== 'elevenlabs') continue;
      for (const name of openAiOnly[modality]) {
        if (e[name] !== undefined)
          problem(name, `applies to ${modality}_PROVIDER=openai; with elevenlabs, set the ELEVENLABS_* variables`);
      }
    }
    if (
      (e.STT_PROVIDER ?? defaults(e).stt) === 'local' &&
      e.STT_LANGUAGE !== undefined &&
      !/^en(?:g)?(?:[-_]|$)/i.test(e.STT_LANGUAGE)
    ) {
      problem(
        'STT_LANGUAGE',
        'the local recogniser (pocketsphinx-en-us) understands English only; unset it, or choose STT_PROVIDER=openai or elevenlabs',
      );
    }
    if (e.ELEVENLABS_TTS_TRANSPORT === 'websocket' && /^eleven_v3/.test(e.ELEVENLABS_TTS_MODEL)) {
      problem(
        'ELEVENLABS_TTS_MODEL',
        `${e.ELEVENLABS_TTS_MODEL} is not served over ElevenLabs' WebSocket; set ELEVENLABS_TTS_TRANSPORT=http for it`,
      );
    }
  });

export interface ModelEndpoint {
  baseURL: string | undefined;
  apiKey: string;
  model: string;
}

/** ElevenLabs as either speech provider: one account, one base URL, and the plugin's logging switch. */
export interface ElevenLabsAccount {
  apiKey: string;
  baseURL: string;
  enableLogging: boolean;
}

export type SttSettings =
  | { provider: 'local'; modelDir: string }
  | ({ provider: 'openai'; language: string | undefined } & ModelEndpoint)
  | { provider: 'elevenlabs'; language: string | undefined; model: string; account: ElevenLabsAccount };

export type TtsSettings =
  | { provider: 'local'; voice: string; speed: number }
  | ({ provider: 'openai'; voice: string } & ModelEndpoint)
  | {
      provider: 'elevenlabs';
      model: string;
      voiceId: string | undefined;
      language: string | undefined;
      transport: 'websocket' | 'http';
      account: ElevenLabsAccount;
    };

export interface AgentSettings {
  liveKit: { url: string; apiKey: string; apiSecret: string };
  agentName: string;
  service: { url: string; apiKey: string | undefined; timeoutMs: number; retryMaxMs: number };
  refreshPolicy: RefreshPolicy;
  modelTimeoutMs: number;
  /** none: the scripted dialog answers (agent/scripted-dialog), no language model. */
  llm: ({ provider: 'openai' } & ModelEndpoint) | { provider: 'none' };
  stt: SttSettings;
  tts: TtsSettings;
  worker: {
    httpHost: string;
    httpPort: number;
    idleProcesses: number;
    loadThreshold: number | undefined;
    loadMeasure: 'jobs' | 'cpu';
    maxJobs: number;
    logLevel: string;
  };
  /** Where the scripted dialog's inspection events go, if anywhere. */
  inspectUrl: string | undefined;
  /** A person asked for (docs/explanation/handoff.md): how long to wait for an operator, and what the agent does when one joins. */
  handoff: { timeoutMs: number; onOperator: 'silent' | 'leave' };
}

export class AgentSettingsError extends Error {
  override name = 'AgentSettingsError';
}

/** The agent's settings from its environment; a bad one stops it with every problem named. */
export function loadAgentSettings(env: NodeJS.ProcessEnv = process.env): AgentSettings {
  const cleaned = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value.trim() !== ''),
  );
  const parsed = EnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    throw new AgentSettingsError(
      `invalid agent configuration: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
    );
  }
  const e = parsed.data;
  // A provider that needs no key (a local server) still gets a non-empty one: the OpenAI client refuses none.
  const endpoint = (baseURL: string | undefined, apiKey: string | undefined, model: string): ModelEndpoint => ({
    baseURL: baseURL ?? e.MODEL_BASE_URL,
    apiKey: apiKey ?? e.MODEL_API_KEY ?? 'unset',
    model,
  });
  // Called only for a provider set to elevenlabs, which the check above made require the key.
  const elevenLabs = (): ElevenLabsAccount => ({
    apiKey: e.ELEVENLABS_API_KEY ?? '',
    baseURL: e.ELEVENLABS_BASE_URL.replace(/\/+$/, ''),
    enableLogging: e.ELEVENLABS_ENABLE_LOGGING,
  });
  const fallback = defaults(e);
  const sttProvider = e.STT_PROVIDER ?? fallback.stt;
  const ttsProvider = e.TTS_PROVIDER ?? fallback.tts;
  const llmProvider = e.LLM_PROVIDER ?? fallback.llm;
  const stt: SttSettings =
    sttProvider === 'local'
      ? { provider: 'local', modelDir: e.POCKETSPHINX_MODEL_DIR }
      : sttProvider === 'elevenlabs'
        ? { provider: 'elevenlabs', language: e.STT_LANGUAGE, model: e.ELEVENLABS_STT_MODEL, account: elevenLabs() }
        : {
            provider: 'openai',
            language: e.STT_LANGUAGE,
            ...endpoint(e.STT_BASE_URL, e.STT_API_KEY, e.STT_MODEL ?? 'whisper-1'),
          };
  const tts: TtsSettings =
    ttsProvider === 'local'
      ? {
          provider: 'local',
          voice: ESPEAK_VOICES[e.LOCAL_TTS_VOICE.toLowerCase()] ?? e.LOCAL_TTS_VOICE,
          speed: e.LOCAL_TTS_SPEED,
        }
      : ttsProvider === 'elevenlabs'
        ? {
            provider: 'elevenlabs',
            model: e.ELEVENLABS_TTS_MODEL,
            voiceId: e.ELEVENLABS_VOICE_ID,
            language: e.ELEVENLABS_TTS_LANGUAGE,
            transport: e.ELEVENLABS_TTS_TRANSPORT,
            account: elevenLabs(),
          }
        : {
            provider: 'openai',
            voice: e.TTS_VOICE ?? 'alloy',
            ...endpoint(e.TTS_BASE_URL, e.TTS_API_KEY, e.TTS_MODEL ?? 'tts-1'),
          };
  return {
    liveKit: { url: e.LIVEKIT_URL, apiKey: e.LIVEKIT_API_KEY, apiSecret: e.LIVEKIT_API_SECRET },
    agentName: e.VOICE_AGENT_NAME,
    service: {
      url: e.SERVICE_URL,
      apiKey: e.SERVICE_API_KEY,
      timeoutMs: e.SERVICE_TIMEOUT_SECONDS * 1000,
      retryMaxMs: e.SERVICE_RETRY_MAX_SECONDS * 1000,
    },
    refreshPolicy: {
      interval_seconds: e.VOICE_CONTEXT_REFRESH_SECONDS,
      on_user_turn: e.VOICE_CONTEXT_REFRESH_ON_USER_TURN,
      min_interval_seconds: e.VOICE_CONTEXT_REFRESH_MIN_INTERVAL_SECONDS,
    },
    modelTimeoutMs: e.MODEL_TIMEOUT_SECONDS * 1000,
    llm:
      llmProvider === 'none'
        ? { provider: 'none' }
        : { provider: 'openai', ...endpoint(e.LLM_BASE_URL, e.LLM_API_KEY, e.LLM_MODEL ?? 'gpt-4o-mini') },
    stt,
    tts,
    worker: {
      httpHost: e.AGENT_HTTP_HOST,
      httpPort: e.AGENT_HTTP_PORT,
      idleProcesses: e.AGENT_IDLE_PROCESSES ?? e.AGENT_MAX_JOBS,
      loadThreshold: e.AGENT_LOAD_THRESHOLD,
      loadMeasure: e.AGENT_LOAD_MEASURE,
      maxJobs: e.AGENT_MAX_JOBS,
      logLevel: e.AGENT_LOG_LEVEL,
    },
    inspectUrl: e.AGENT_INSPECT,
    handoff: { timeoutMs: e.HANDOFF_TIMEOUT_SECONDS * 1000, onOperator: e.AGENT_ON_OPERATOR },
  };
}
