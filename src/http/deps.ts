import type { Logger } from 'pino';
import type { SessionHost } from '../actor-system/session-host.js';
import type { ActorSystem } from '../actor-system/system.js';
import type { AppConfig } from '../config.js';
import type { SessionKeys } from '../domain/session-key.js';
import type { HeapTrim } from '../integrations/heap-trim.js';
import type { KernelSendQueues } from '../integrations/kernel-send-queues.js';
import type { SdkConfigSource } from '../integrations/sdk-config-source.js';

/** Everything the HTTP layer is built from; tests construct it with a simulated clock. */
export interface AppDeps {
  config: AppConfig;
  /** Any host of sessions: the routes use only the `SessionHost` surface. */
  system: ActorSystem<SessionHost>;
  logger: Logger;
  mediaReady: boolean;
  /** Defaults plus SDK_CONFIG_FILE overrides, kept current as the file changes. */
  sdkConfig: SdkConfigSource;
  /** The keys sessions are known by, digests made with this process's secret (ID_DIGEST_SECRET or the store's). */
  sessionKeys: SessionKeys;
  /** The background heap trim's record (`GET /api/status`); absent where none runs (an app built for a test). */
  heapTrim?: Pick<HeapTrim, 'stats'> | undefined;
  /** What the kernel holds unread per connection; Linux's tables (kernel-send-queues.ts) unless given. */
  kernelSendQueues?: KernelSendQueues | undefined;
}
