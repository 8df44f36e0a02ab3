/**
 * The service's settings: every environment variable it reads, validated at start into one
 * AppConfig, with one clear error naming each bad value. What kind of value each holds is
 * config/env-values.ts.
 */
import { z } from 'zod';
import type { RefreshPolicy } from './domain/refresh-policy.js';
import { DEFAULT_CRITICAL_STEPS } from './domain/critical-steps.js';
import { MAX_TIMER_SECONDS } from './domain/timer-limit.js';
import { isLoopbackHost } from './domain/loopback.js';
import type { PiiRules } from './domain/pii.js';
import { EXTRA_KEY_PATTERN, createPiiRules } from './domain/pii.js';
import { DEFAULT_VOICE_SILENCE_TIMEOUT_SECONDS, MEDIA_CALLS_PER_START } from './domain/voice-session.js';
import type { InspectSetting } from './config/inspection-setting.js';
import { parseInspectSetting } from './config/inspection-setting.js';
import { booleanFlag, booleanText, csv, featureFlagOverrides, mediaServerUrl, nonNegativeInt, optionalText, positiveInt, RESTATE_PUBLIC_KEY, restateUrl } from './config/env-values.js';

const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65_535).default(8080),
  // Loopback unless told otherwise (docs/decisions/0002-safe-defaults-for-running-it.md): nothing is exposed by accident.
  HOST: z.string().min(1).default('127.0.0.1'),
  API_KEY: csv.optional(),
  ID_DIGEST_SECRET: z.string().trim().min(16, { error: 'must be at least 16 characters' }).optional(),
  FEATURE_FLAGS: featureFlagOverrides,
  SESSION_IDLE_TTL_SECONDS: positiveInt(86_400).pipe(z.number().max(MAX_TIMER_SECONDS)),
  SESSION_HIBERNATE_SECONDS: nonNegativeInt(60).pipe(z.number().max(MAX_TIMER_SECONDS)),
  MAX_SESSIONS: positiveInt(100_000),
  // Where sessions and activity are kept: SQLite under DATA_DIR (kept across restarts) or memory.
  STORE: z.enum(['sqlite', 'memory'], { error: 'must be sqlite or memory' }).default('sqlite'),
  DATA_DIR: z.string().trim().min(1).default('./data'),
  STORE_SYNC: z.enum(['normal', 'full'], { error: 'must be normal or full' }).default('normal'),
  ACTIVITY_RETENTION_ITEMS: z.coerce.number().int().positive().max(100_000_000).optional(),
  ACTIVITY_RETENTION_DAYS: nonNegativeInt(30).pipe(z.number().max(36_500)),
  // Unset: activity is kept by STORE. A redis:// URL: one Redis Stream shared by every service process.
  ACTIVITY_LOG: z
    .string()
    .trim()
    .refine((value) => /^rediss?:\/\/[^\s]+$/.test(value), { error: 'must be a redis:// or rediss:// URL' })
    .optional(),
  // Where sessions run: in this process, or as Restate virtual objects (cluster mode).
  SESSION_HOST: z.enum(['embedded', 'restate'], { error: 'must be embedded or restate' }).default('embedded'),
  RESTATE_INGRESS_URL: restateUrl,
  RESTATE_ADMIN_URL: restateUrl,
  RESTATE_ENDPOINT_PORT: z.coerce.number().int().min(1).max(65_535).optional(),
  // The endpoint the Restate server calls: loopback unless the server runs on another host of a private network.
  RESTATE_ENDPOINT_HOST: z.string().trim().min(1).default('127.0.0.1'),
  // The Restate servers' request-signing public keys (docs/cluster.md, Request signing): the endpoint refuses any call not signed by one.
  RESTATE_IDENTITY_KEYS: z
    .string()
    .optional()
    .transform((value) => (value ?? '').split(',').map((key) => key.trim()).filter((key) => key.length > 0))
    .refine((keys) => keys.every((key) => RESTATE_PUBLIC_KEY.test(key)), { error: 'each key must be a Restate public key, publickeyv1_ and base58 (Restate logs its own at start)' }),
  // Older name of the count limit (the in-memory ring's size), still honoured.
  ACTIVITY_BUFFER_SIZE: z.coerce.number().int().positive().max(1_000_000).optional(),
  RATE_LIMIT_PER_MINUTE: nonNegativeInt(1200),
  // Unset: loopback clients are limited only when the service is reachable from elsewhere (docs/limits.md).
  RATE_LIMIT_LOOPBACK: booleanText.optional(),
  // `true` would trust any X-Forwarded-For, and a client rotating it escapes the rate limit.
  TRUST_PROXY: optionalText.refine((raw) => raw?.toLowerCase() !== 'true', {
    error: 'true trusts any X-Forwarded-For (clients could evade the rate limit); give the number of proxy hops (e.g. 1) or the proxy addresses/subnets',
  }),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SHUTDOWN_GRACE_SECONDS: positiveInt(10).pipe(z.number().max(60)),
  LIVEKIT_URL: mediaServerUrl,
  LIVEKIT_API_KEY: optionalText,
  LIVEKIT_API_SECRET: optionalText,
  // The room name `{prefix}-{session_id}` must stay within the media server's 256-byte limit.
  MEDIA_ROOM_PREFIX: z.string().regex(/^[A-Za-z0-9._:-]{1,64}$/, { error: 'must be 1-64 characters of A-Za-z0-9._:-' }).default('kyc-room'),
  VOICE_AGENT_NAME: z.string().trim().min(1).max(128).default('kyc-voice-agent'),
  TOKEN_TTL_SECONDS: positiveInt(3600).pipe(z.number().max(86_400)),
  MEDIA_REQUEST_TIMEOUT_SECONDS: z.coerce.number().positive().max(30).default(3),
  REENGAGEMENT_INACTIVITY_SECONDS: positiveInt(300).pipe(z.number().max(MAX_TIMER_SECONDS)),
  // Voice-agent context (docs/decisions/0006-the-voice-agents-context.md).
  KYC_KB_FILE: optionalText,
  VOICE_CONTEXT_REFRESH_SECONDS: positiveInt(60).pipe(z.number().max(MAX_TIMER_SECONDS)),
  VOICE_CONTEXT_REFRESH_ON_USER_TURN: booleanFlag(true),
  VOICE_CONTEXT_REFRESH_MIN_INTERVAL_SECONDS: nonNegativeInt(5).pipe(z.number().max(MAX_TIMER_SECONDS)),
  VOICE_SILENCE_TIMEOUT_SECONDS: positiveInt(DEFAULT_VOICE_SILENCE_TIMEOUT_SECONDS).pipe(z.number().max(MAX_TIMER_SECONDS)),
  SDK_CONFIG_FILE: optionalText,
  SDK_ENVIRONMENT: z.string().regex(/^[a-z0-9_-]{1,32}$/, { error: 'must be 1-32 characters of a-z0-9_-' }).default('production'),
  // WebSocket control plane (GET /v1/events/ws).
  WS_MAX_CONNECTIONS: positiveInt(2000),
  WS_MAX_MESSAGES_PER_SECOND: positiveInt(20).pipe(z.number().max(1000)),
  WS_MAX_FRAME_BYTES: positiveInt(65_536).pipe(z.number().min(1024).max(65_536, { error: "must be at most 65536 (the HTTP body limit)" })),
  WS_IDLE_TIMEOUT_SECONDS: positiveInt(90).pipe(z.number().max(3600)),
  CRITICAL_STEPS: csv.optional(),
  // Privacy: keys masked whatever their value, on top of the built-in list (docs/privacy-masking.md).
  PII_EXTRA_KEYS: csv
    .pipe(z.array(z.string().regex(EXTRA_KEY_PATTERN, { error: 'must be a comma-separated list of field names (a letter, then letters, digits, _ or -; at most 64 characters each)' })).max(200, { error: 'must list at most 200 keys' }))
    .optional(),
  // Activity stream (GET /api/activity/stream).
  SSE_MAX_STREAMS: positiveInt(2000),
  SSE_MAX_BUFFER_BYTES: positiveInt(1_048_576).pipe(z.number().min(65_536)),
  SSE_HEARTBEAT_SECONDS: positiveInt(15).pipe(z.number().max(3600)),
  // Hardening: connections, request timeouts, memory.
  MAX_CONNECTIONS: positiveInt(10_000),
  // Above an honest burst from one address (1,000 operator streams opened at once, many apps behind one NAT), below MAX_CONNECTIONS so one address still cannot take every place (docs/security.md).
  MAX_UNAUTHENTICATED_PER_CLIENT: positiveInt(2048),
  // A request sent again with the same X-Request-ID or Idempotency-Key within this is answered as the first; 0 turns it off.
  REPLAY_WINDOW_SECONDS: nonNegativeInt(300).pipe(z.number().max(86_400)),
  REQUEST_TIMEOUT_SECONDS: positiveInt(10).pipe(z.number().max(300)),
  SESSION_MAX_BYTES: positiveInt(65_536).pipe(z.number().min(4096)),
  MEMORY_BUDGET_MB: positiveInt(1024).pipe(z.number().min(64)),
  // Live inspection of session machines (Stately inspector).
  INSPECT: z
    .string()
    .transform((raw, ctx) => {
      const parsed = parseInspectSetting(raw);
      if (typeof parsed === 'string') {
        ctx.addIssue({ code: 'custom', message: parsed });
        return z.NEVER;
      }
      return parsed;
    })
    .optional(),
});

export interface AppConfig {
  port: number;
  host: string;
  apiKeys: string[];
  /** ID_DIGEST_SECRET: the key of the digests that stand for identity-looking session ids; unset, the store's own. */
  idDigestSecret: string | undefined;
  featureFlagOverrides: Record<string, boolean>;
  sessionIdleTtlSeconds: number;
  sessionHibernateSeconds: number;
  maxSessions: number;
  store: StoreConfig;
  /** Activity items kept, newest first (ACTIVITY_RETENTION_ITEMS). */
  activityRetentionItems: number;
  /** Activity items older than this many days are dropped (SQLite store); 0 keeps them whatever their age. */
  activityRetentionDays: number;
  /** ACTIVITY_LOG: a Redis URL when the activity log is a Redis Stream; undefined keeps it in STORE. */
  activityLog: string | undefined;
  /** SESSION_HOST: this process's supervisor, or Restate virtual objects reached through its ingress. */
  sessionHost: SessionHostConfig;
  rateLimitPerMinute: number;
  /**
   * Whether clients on this machine count against the rate limit. Off by default for a service
   * bound to loopback with no proxy in front: its only clients are the developer's own simulator
   * and console, which would otherwise lock each other out.
   */
  rateLimitLoopback: boolean;
  trustProxy: string | undefined;
  logLevel: string;
  shutdownGraceSeconds: number;
  livekitUrl: string | undefined;
  livekitApiKey: string | undefined;
  livekitApiSecret: string | undefined;
  mediaRoomPrefix: string;
  voiceAgentName: string;
  tokenTtlSeconds: number;
  /** Budget of each call to the media server, in seconds (fractions allowed). */
  mediaRequestTimeoutSeconds: number;
  reengagementInactivitySeconds: number;
  /** VOICE_SILENCE_TIMEOUT_SECONDS: an active voice session not heard from this long ends on its own. */
  voiceSilenceTimeoutSeconds: number;
  /** JSON knowledge base for the voice agent; unset = the bundled one. */
  kycKbFile: string | undefined;
  voiceContextRefresh: RefreshPolicy;
  /** JSON file of SDK-config overrides, validated and watched by the SDK config source. */
  sdkConfigFile: string | undefined;
  /** Reported to SDKs as `environment` in GET /v1/sdk/config. */
  sdkEnvironment: string;
  wsMaxConnections: number;
  wsMaxMessagesPerSecond: number;
  wsMaxFrameBytes: number;
  wsIdleTimeoutSeconds: number;
  /** Screen ids the trigger policy treats as critical, as configured (compared case-insensitively). */
  criticalSteps: string[];
  sseMaxStreams: number;
  sseMaxBufferBytes: number;
  sseHeartbeatSeconds: number;
  /** Where session machines are inspected from; undefined = off (no inspector exists at all). */
  inspect: InspectSetting | undefined;
  /** PII_EXTRA_KEYS as given. */
  piiExtraKeys: string[];
  /** The built-in detectors and key rules plus PII_EXTRA_KEYS: what events, logs and inspection redact. */
  piiRules: PiiRules;
  /** Concurrent connections the server accepts, of every kind; SSE and WebSocket also have caps of their own. */
  maxConnections: number;
  /** Connections one client address may hold before any of them shows a key; past it its oldest gives way (docs/security.md). */
  maxUnauthenticatedPerClient: number;
  /** REPLAY_WINDOW_SECONDS: how long a request id is remembered, per client (docs/limits.md); 0 = not at all. */
  replayWindowSeconds: number;
  /** A request's headers and body must arrive within this (slow clients are cut). */
  requestTimeoutSeconds: number;
  /** What one session may hold (the session record of docs/decisions/0001-identity-values-masked-on-arrival.md plus stored events), measured at ingest. */
  sessionMaxBytes: number;
  /** What all sessions together may hold; past it hibernated sessions go, then new sessions get 503. */
  memoryBudgetMb: number;
}

export type SessionHostConfig =
  | { kind: 'embedded' }
  /** `redisUrl`: ACTIVITY_LOG's Redis, which also carries the commands sessions push to control sockets on every process. */
  | { kind: 'restate'; ingressUrl: string; adminUrl: string; endpointHost: string; endpointPort: number; redisUrl: string; identityKeys: string[] };

export interface StoreConfig {
  kind: 'sqlite' | 'memory';
  /** The directory of the database file (sqlite). */
  dataDir: string;
  /** `full`: every commit survives power loss, at several times the cost per commit. */
  sync: 'normal' | 'full';
}

/** A SQLite log is an audit trail and costs disk, not memory; the memory ring costs memory. */
const DEFAULT_RETENTION_ITEMS = { sqlite: 1_000_000, memory: 10_000 } as const;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Empty strings count as unset, so `FOO=` in a shell or .env file never means "the empty value". */
function withoutBlanks(env: NodeJS.ProcessEnv): Record<string, string> {
  const cleaned: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && value.trim() !== '') cleaned[key] = value;
  }
  return cleaned;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const given = withoutBlanks(env);
  const parsed = EnvSchema.safeParse(given);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}${shownValue(String(issue.path[0]), given)}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  const e = parsed.data;
  const missingMedia = partialMediaSettings(e);
  if (missingMedia.length > 0) {
    throw new ConfigError(
      `invalid configuration: ${missingMedia.join(', ')}: required with the other LIVEKIT_* settings (set all three for voice on LiveKit, or none for placeholder tokens)`,
    );
  }
  // A voice start still waiting on the media server when shutdown cuts connections gets ECONNRESET:
  // the grace must cover the longest start, each of its media calls taking its whole timeout.
  if (e.MEDIA_REQUEST_TIMEOUT_SECONDS * MEDIA_CALLS_PER_START > e.SHUTDOWN_GRACE_SECONDS) {
    throw new ConfigError(
      `invalid configuration: MEDIA_REQUEST_TIMEOUT_SECONDS (${e.MEDIA_REQUEST_TIMEOUT_SECONDS}) × ${MEDIA_CALLS_PER_START} media calls per voice start exceeds SHUTDOWN_GRACE_SECONDS (${e.SHUTDOWN_GRACE_SECONDS}): in-flight voice starts would be cut at shutdown; lower the first or raise the second`,
    );
  }
  const sessionHost = sessionHostConfig(e);
  if (e.VOICE_CONTEXT_REFRESH_MIN_INTERVAL_SECONDS > e.VOICE_CONTEXT_REFRESH_SECONDS) {
    throw new ConfigError('invalid configuration: VOICE_CONTEXT_REFRESH_MIN_INTERVAL_SECONDS: must not exceed VOICE_CONTEXT_REFRESH_SECONDS');
  }
  // A running call's agent fetches its context at least every refresh interval: a timeout within
  // two of them would end calls that are only between refreshes.
  if (e.VOICE_SILENCE_TIMEOUT_SECONDS < 2 * e.VOICE_CONTEXT_REFRESH_SECONDS) {
    throw new ConfigError(
      `invalid configuration: VOICE_SILENCE_TIMEOUT_SECONDS (${e.VOICE_SILENCE_TIMEOUT_SECONDS}) must be at least twice VOICE_CONTEXT_REFRESH_SECONDS (${e.VOICE_CONTEXT_REFRESH_SECONDS}): a running call's agent is only heard from once per refresh`,
    );
  }
  return {
    port: e.PORT,
    host: e.HOST,
    apiKeys: e.API_KEY ?? [],
    idDigestSecret: e.ID_DIGEST_SECRET,
    featureFlagOverrides: e.FEATURE_FLAGS ?? {},
    sessionIdleTtlSeconds: e.SESSION_IDLE_TTL_SECONDS,
    sessionHibernateSeconds: e.SESSION_HIBERNATE_SECONDS,
    maxSessions: e.MAX_SESSIONS,
    store: { kind: e.STORE, dataDir: e.DATA_DIR, sync: e.STORE_SYNC },
    activityRetentionItems: e.ACTIVITY_RETENTION_ITEMS ?? e.ACTIVITY_BUFFER_SIZE ?? DEFAULT_RETENTION_ITEMS[e.STORE],
    activityRetentionDays: e.ACTIVITY_RETENTION_DAYS,
    activityLog: e.ACTIVITY_LOG,
    sessionHost,
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    rateLimitLoopback: e.RATE_LIMIT_LOOPBACK ?? (!isLoopbackHost(e.HOST) || e.TRUST_PROXY !== undefined),
    trustProxy: e.TRUST_PROXY,
    logLevel: e.LOG_LEVEL,
    shutdownGraceSeconds: e.SHUTDOWN_GRACE_SECONDS,
    livekitUrl: e.LIVEKIT_URL,
    livekitApiKey: e.LIVEKIT_API_KEY,
    livekitApiSecret: e.LIVEKIT_API_SECRET,
    mediaRoomPrefix: e.MEDIA_ROOM_PREFIX,
    voiceAgentName: e.VOICE_AGENT_NAME,
    tokenTtlSeconds: e.TOKEN_TTL_SECONDS,
    mediaRequestTimeoutSeconds: e.MEDIA_REQUEST_TIMEOUT_SECONDS,
    reengagementInactivitySeconds: e.REENGAGEMENT_INACTIVITY_SECONDS,
    voiceSilenceTimeoutSeconds: e.VOICE_SILENCE_TIMEOUT_SECONDS,
    kycKbFile: e.KYC_KB_FILE,
    voiceContextRefresh: {
      interval_seconds: e.VOICE_CONTEXT_REFRESH_SECONDS,
      on_user_turn: e.VOICE_CONTEXT_REFRESH_ON_USER_TURN,
      min_interval_seconds: e.VOICE_CONTEXT_REFRESH_MIN_INTERVAL_SECONDS,
    },
    sdkConfigFile: e.SDK_CONFIG_FILE,
    sdkEnvironment: e.SDK_ENVIRONMENT,
    wsMaxConnections: e.WS_MAX_CONNECTIONS,
    wsMaxMessagesPerSecond: e.WS_MAX_MESSAGES_PER_SECOND,
    wsMaxFrameBytes: e.WS_MAX_FRAME_BYTES,
    wsIdleTimeoutSeconds: e.WS_IDLE_TIMEOUT_SECONDS,
    criticalSteps: e.CRITICAL_STEPS ?? [...DEFAULT_CRITICAL_STEPS],
    sseMaxStreams: e.SSE_MAX_STREAMS,
    sseMaxBufferBytes: e.SSE_MAX_BUFFER_BYTES,
    sseHeartbeatSeconds: e.SSE_HEARTBEAT_SECONDS,
    inspect: e.INSPECT ?? undefined,
    piiExtraKeys: e.PII_EXTRA_KEYS ?? [],
    piiRules: createPiiRules(e.PII_EXTRA_KEYS ?? []),
    maxConnections: e.MAX_CONNECTIONS,
    maxUnauthenticatedPerClient: e.MAX_UNAUTHENTICATED_PER_CLIENT,
    replayWindowSeconds: e.REPLAY_WINDOW_SECONDS,
    requestTimeoutSeconds: e.REQUEST_TIMEOUT_SECONDS,
    sessionMaxBytes: e.SESSION_MAX_BYTES,
    memoryBudgetMb: e.MEMORY_BUDGET_MB,
  };
}

/** Settings whose value is a credential: never repeated in an error, which may reach a shared log. */
const SECRET_SETTINGS: ReadonlySet<string> = new Set(['API_KEY', 'ID_DIGEST_SECRET', 'LIVEKIT_API_KEY', 'LIVEKIT_API_SECRET']);
const SHOWN_VALUE_CHARS = 80;

/** ` (got "abc")`: the value as given, so whoever set it sees what was read; nothing for a credential. */
function shownValue(name: string, given: Record<string, string>): string {
  const value = given[name];
  if (value === undefined || SECRET_SETTINGS.has(name)) return '';
  const shown = value.length > SHOWN_VALUE_CHARS ? `${value.slice(0, SHOWN_VALUE_CHARS)}…` : value;
  return ` (got ${JSON.stringify(shown)})`;
}

/**
 * The LiveKit settings missing when some but not all three are set: such a start would run on
 * placeholder tokens without a word, and every voice start would fail on the device instead.
 */
function partialMediaSettings(e: z.infer<typeof EnvSchema>): string[] {
  const settings = [
    ['LIVEKIT_URL', e.LIVEKIT_URL],
    ['LIVEKIT_API_KEY', e.LIVEKIT_API_KEY],
    ['LIVEKIT_API_SECRET', e.LIVEKIT_API_SECRET],
  ] as const;
  const missing = settings.filter(([, value]) => value === undefined).map(([name]) => name);
  return missing.length === settings.length ? [] : missing;
}

/** SESSION_HOST=restate needs the Restate addresses, its endpoint's port, an activity log every process shares, and one digest secret. */
function sessionHostConfig(e: z.infer<typeof EnvSchema>): SessionHostConfig {
  if (e.SESSION_HOST === 'embedded') return { kind: 'embedded' };
  const missing = (
    [
      ['RESTATE_INGRESS_URL', e.RESTATE_INGRESS_URL],
      ['RESTATE_ADMIN_URL', e.RESTATE_ADMIN_URL],
      ['RESTATE_ENDPOINT_PORT', e.RESTATE_ENDPOINT_PORT],
      ['ACTIVITY_LOG', e.ACTIVITY_LOG],
      // Every process must key an identity-looking session id alike, and none keeps a store of its own.
      ['ID_DIGEST_SECRET', e.ID_DIGEST_SECRET],
      // Every handler is callable through the endpoint: only calls Restate signed are taken.
      ['RESTATE_IDENTITY_KEYS', e.RESTATE_IDENTITY_KEYS.length > 0 ? e.RESTATE_IDENTITY_KEYS : undefined],
    ] as const
  ).find(([, value]) => value === undefined);
  if (missing) throw new ConfigError(`invalid configuration: ${missing[0]}: required when SESSION_HOST=restate`);
  return {
    kind: 'restate',
    ingressUrl: e.RESTATE_INGRESS_URL!,
    adminUrl: e.RESTATE_ADMIN_URL!,
    endpointHost: e.RESTATE_ENDPOINT_HOST,
    endpointPort: e.RESTATE_ENDPOINT_PORT!,
    redisUrl: e.ACTIVITY_LOG!,
    identityKeys: e.RESTATE_IDENTITY_KEYS,
  };
}
