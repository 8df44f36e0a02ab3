/**
 * The service's settings: every environment variable it reads, validated at start into one
 * AppConfig of sections, with one clear error naming each bad value. Each section (config/*.ts)
 * owns its variables, its typed shape and the checks among them; what kind of value each
 * variable holds is config/env-values.ts. How to add a setting: docs/reference/configuration.md.
 */
import { z } from 'zod';
import { invalidConfiguration } from './config/config-error.js';
import { isCredential } from './config/env-values.js';
import type { CallsSection } from './config/calls.config.js';
import { callsEnv, callsSection } from './config/calls.config.js';
import type { ClusterSection } from './config/cluster.config.js';
import { clusterEnv, clusterSection } from './config/cluster.config.js';
import type { DiagnosticsSection } from './config/diagnostics.js';
import { diagnosticsEnv, diagnosticsSection } from './config/diagnostics.js';
import type { HttpSection } from './config/http.config.js';
import { httpEnv, httpSection } from './config/http.config.js';
import type { MediaSection } from './config/media.config.js';
import { mediaEnv, mediaSection } from './config/media.config.js';
import type { PrivacySection } from './config/privacy.config.js';
import { privacyEnv, privacySection } from './config/privacy.config.js';
import type { SdkSection } from './config/sdk.config.js';
import { sdkEnv, sdkSection } from './config/sdk.config.js';
import type { SessionsSection } from './config/sessions.config.js';
import { sessionsEnv, sessionsSection } from './config/sessions.config.js';
import type { StoreSection } from './config/store.config.js';
import { storeEnv, storeSection } from './config/store.config.js';
import type { StreamSection } from './config/stream.config.js';
import { streamEnv, streamSection } from './config/stream.config.js';
import type { VoiceSection } from './config/voice.config.js';
import { voiceEnv, voiceSection } from './config/voice.config.js';
import type { WebSocketSection } from './config/websocket.config.js';
import { websocketEnv, websocketSection } from './config/websocket.config.js';

export { ConfigError } from './config/config-error.js';
export type { SessionEndpointConfig, SessionHostConfig } from './config/cluster.config.js';

export interface AppConfig {
  http: HttpSection;
  store: StoreSection;
  sessions: SessionsSection;
  voice: VoiceSection;
  media: MediaSection;
  stream: StreamSection;
  websocket: WebSocketSection;
  privacy: PrivacySection;
  cluster: ClusterSection;
  sdk: SdkSection;
  diagnostics: DiagnosticsSection;
  calls: CallsSection;
}

/** Each section's variables, under the section's name in AppConfig: a variable belongs to one section. */
export const SECTION_ENV = {
  http: httpEnv,
  store: storeEnv,
  sessions: sessionsEnv,
  voice: voiceEnv,
  media: mediaEnv,
  stream: streamEnv,
  websocket: websocketEnv,
  privacy: privacyEnv,
  cluster: clusterEnv,
  sdk: sdkEnv,
  diagnostics: diagnosticsEnv,
  calls: callsEnv,
} satisfies Record<keyof AppConfig, z.ZodObject>;

const EnvSchema = z.object({
  ...SECTION_ENV.http.shape,
  ...SECTION_ENV.store.shape,
  ...SECTION_ENV.sessions.shape,
  ...SECTION_ENV.voice.shape,
  ...SECTION_ENV.media.shape,
  ...SECTION_ENV.stream.shape,
  ...SECTION_ENV.websocket.shape,
  ...SECTION_ENV.privacy.shape,
  ...SECTION_ENV.cluster.shape,
  ...SECTION_ENV.sdk.shape,
  ...SECTION_ENV.diagnostics.shape,
  ...SECTION_ENV.calls.shape,
});

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
    const problems = parsed.error.issues.map(
      (issue) => `${issue.path.join('.')}: ${issue.message}${shownValue(String(issue.path[0]), given)}`,
    );
    throw invalidConfiguration(problems.join('; '));
  }
  const e = parsed.data;
  // Built in the order their checks are reported: the media settings, the cluster's, then the voice agent's.
  const http = httpSection(e);
  const media = mediaSection(e, http);
  const store = storeSection(e);
  const privacy = privacySection(e);
  const cluster = clusterSection(e, { activityLog: store.activityLog, idDigestSecret: privacy.idDigestSecret });
  const voice = voiceSection(e);
  return {
    http,
    store,
    sessions: sessionsSection(e),
    voice,
    media,
    stream: streamSection(e),
    websocket: websocketSection(e),
    privacy,
    cluster,
    sdk: sdkSection(e),
    diagnostics: diagnosticsSection(e),
    calls: callsSection(e),
  };
}

const SHOWN_VALUE_CHARS = 80;

/** ` (got "abc")`: the value as given, so whoever set it sees what was read; nothing for a credential, as an error may reach a shared log. */
function shownValue(name: string, given: Record<string, string>): string {
  const value = given[name];
  if (value === undefined || isCredential(EnvSchema.shape[name as keyof typeof EnvSchema.shape])) return '';
  const shown = value.length > SHOWN_VALUE_CHARS ? `${value.slice(0, SHOWN_VALUE_CHARS)}…` : value;
  return ` (got ${JSON.stringify(shown)})`;
}
