import { z } from 'zod';
import type { RefreshPolicy } from '../src/domain/refresh-policy.js';
import { DEFAULT_REFRESH_POLICY } from '../src/domain/refresh-policy.js';

/** Empty strings count as unset, as in the service's own configuration. */
const optional = z.string().trim().min(1).optional();
const seconds = (fallback: number) => z.coerce.number().nonnegative().default(fallback);
const flag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0'])
    .transform((raw) => raw === 'true' || raw === '1')
    .default(fallback);

const EnvSchema = z.object({
  LIVEKIT_URL: z.string().regex(/^(wss?|https?):\/\/[^\s/]+/, { error: 'must be a ws://, wss://, http:// or https:// URL' }),
  LIVEKIT_API_KEY: z.string().min(1),
  LIVEKIT_API_SECRET: z.string().min(1),
  VOICE_AGENT_NAME: z.string().trim().min(1).max(128).default('kyc-voice-agent'),
  // The service the agent reads its context from and reports turns to.
  SERVICE_URL: z.string().regex(/^https?:\/\/[^\s/]+/, { error: 'must be an http:// or https:// URL' }).default('http://127.0.0.1:8080'),
  SERVICE_API_KEY: optional,
  SERVICE_TIMEOUT_SECONDS: z.coerce.number().positive().default(5),
  SERVICE_RETRY_MAX_SECONDS: z.coerce.number().positive().default(30),
  // Used until the service serves its own refresh policy with the context.
  VOICE_CONTEXT_REFRESH_SECONDS: seconds(DEFAULT_REFRESH_POLICY.interval_seconds),
  VOICE_CONTEXT_REFRESH_ON_USER_TURN: flag(DEFAULT_REFRESH_POLICY.on_user_turn),
  VOICE_CONTEXT_REFRESH_MIN_INTERVAL_SECONDS: seconds(DEFAULT_REFRESH_POLICY.min_interval_seconds),
  // Model providers: OpenAI-compatible endpoints; MODEL_* is the default of each of the three.
  MODEL_BASE_URL: optional,
  MODEL_API_KEY: optional,
  MODEL_TIMEOUT_SECONDS: z.coerce.number().positive().default(15),
  LLM_BASE_URL: optional,
  LLM_API_KEY: optional,
  LLM_MODEL: z.string().trim().min(1).default('gpt-4o-mini'),
  STT_BASE_URL: optional,
  STT_API_KEY: optional,
  STT_MODEL: z.string().trim().min(1).default('whisper-1'),
  /** ISO 639-1 code of the language users speak; unset, the model detects it. */
  STT_LANGUAGE: optional,
  TTS_BASE_URL: optional,
  TTS_API_KEY: optional,
  TTS_MODEL: z.string().trim().min(1).default('tts-1'),
  TTS_VOICE: z.string().trim().min(1).default('alloy'),
  // The worker itself.
  // The worker's health endpoint: loopback unless told otherwise, as the service.
  AGENT_HTTP_HOST: z.string().trim().min(1).default('127.0.0.1'),
  AGENT_HTTP_PORT: z.coerce.number().int().min(0).max(65_535).default(8081),
  AGENT_IDLE_PROCESSES: z.coerce.number().int().min(0).max(64).optional(),
  AGENT_LOAD_THRESHOLD: z.coerce.number().positive().optional(),
  // Capacity by job count instead of the machine's CPU use (a machine shared with other work).
  AGENT_MAX_JOBS: z.coerce.number().int().positive().optional(),
  AGENT_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace']).default('info'),
});

export interface ModelEndpoint {
  baseURL: string | undefined;
  apiKey: string;
  model: string;
}

export interface AgentSettings {
  liveKit: { url: string; apiKey: string; apiSecret: string };
  agentName: string;
  service: { url: string; apiKey: string | undefined; timeoutMs: number; retryMaxMs: number };
  refreshPolicy: RefreshPolicy;
  modelTimeoutMs: number;
  llm: ModelEndpoint;
  stt: ModelEndpoint & { language: string | undefined };
  tts: ModelEndpoint & { voice: string };
  worker: { httpHost: string; httpPort: number; idleProcesses: number | undefined; loadThreshold: number | undefined; maxJobs: number | undefined; logLevel: string };
}

export class AgentSettingsError extends Error {
  override name = 'AgentSettingsError';
}

/** The agent's settings from its environment; a bad one stops it with every problem named. */
export function loadAgentSettings(env: NodeJS.ProcessEnv = process.env): AgentSettings {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value.trim() !== ''));
  const parsed = EnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    throw new AgentSettingsError(`invalid agent configuration: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`);
  }
  const e = parsed.data;
  // A provider that needs no key (a local server) still gets a non-empty one: the OpenAI client refuses none.
  const endpoint = (baseURL: string | undefined, apiKey: string | undefined, model: string): ModelEndpoint => ({
    baseURL: baseURL ?? e.MODEL_BASE_URL,
    apiKey: apiKey ?? e.MODEL_API_KEY ?? 'unset',
    model,
  });
  return {
    liveKit: { url: e.LIVEKIT_URL, apiKey: e.LIVEKIT_API_KEY, apiSecret: e.LIVEKIT_API_SECRET },
    agentName: e.VOICE_AGENT_NAME,
    service: { url: e.SERVICE_URL, apiKey: e.SERVICE_API_KEY, timeoutMs: e.SERVICE_TIMEOUT_SECONDS * 1000, retryMaxMs: e.SERVICE_RETRY_MAX_SECONDS * 1000 },
    refreshPolicy: {
      interval_seconds: e.VOICE_CONTEXT_REFRESH_SECONDS,
      on_user_turn: e.VOICE_CONTEXT_REFRESH_ON_USER_TURN,
      min_interval_seconds: e.VOICE_CONTEXT_REFRESH_MIN_INTERVAL_SECONDS,
    },
    modelTimeoutMs: e.MODEL_TIMEOUT_SECONDS * 1000,
    llm: endpoint(e.LLM_BASE_URL, e.LLM_API_KEY, e.LLM_MODEL),
    stt: { ...endpoint(e.STT_BASE_URL, e.STT_API_KEY, e.STT_MODEL), language: e.STT_LANGUAGE },
    tts: { ...endpoint(e.TTS_BASE_URL, e.TTS_API_KEY, e.TTS_MODEL), voice: e.TTS_VOICE },
    worker: { httpHost: e.AGENT_HTTP_HOST, httpPort: e.AGENT_HTTP_PORT, idleProcesses: e.AGENT_IDLE_PROCESSES, loadThreshold: e.AGENT_LOAD_THRESHOLD, maxJobs: e.AGENT_MAX_JOBS, logLevel: e.AGENT_LOG_LEVEL },
  };
}
