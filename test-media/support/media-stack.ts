import { RoomServiceClient } from 'livekit-server-sdk';
import type { AgentWorker } from './agent-worker.js';
import { startAgentWorker } from './agent-worker.js';
import type { LiveKitServer } from './livekit-server.js';
import { startLiveKitServer } from './livekit-server.js';
import { freePort } from '../../scripts/cluster/redis-server.js';
import type { MediaService } from './media-service.js';
import { startMediaService } from './media-service.js';
import type { ModelScript, ModelStandIn } from './model-stand-in.js';
import { startModelStandIn } from './model-stand-in.js';

export interface MediaStackOptions {
  /** The service's settings on top of the test defaults. */
  service?: Record<string, string>;
  models: ModelScript;
  /** The media server sends its webhooks to the service (POST /v1/livekit/webhook), as config/livekit-local.yaml has it. */
  webhooks?: boolean;
  /** The agent worker's environment on top of what points it at the rest (given the service, to put something between them). */
  worker?: Record<string, string> | ((service: MediaService) => Record<string, string>);
}

/**
 * Everything a voice call runs on: a real LiveKit server, the service, stand-ins of the model
 * providers and the real agent worker, started in that order and stopped in the reverse one
 * (also when starting failed half-way, so nothing outlives the test file).
 */
export async function startMediaStack(options: MediaStackOptions) {
  const started: { stop(): Promise<void> }[] = [];
  const stopAll = async () => {
    for (const part of started.splice(0).reverse()) await part.stop().catch(() => {});
  };
  try {
    // The service's port is chosen first when the media server is to call it.
    const servicePort = options.webhooks ? await freePort() : undefined;
    const webhookUrl = servicePort === undefined ? undefined : `http://127.0.0.1:${servicePort}/v1/livekit/webhook`;
    const liveKit: LiveKitServer = await startLiveKitServer({
      logFile: process.env.MEDIA_TEST_LIVEKIT_LOG,
      ...(webhookUrl ? { webhookUrl } : {}),
    });
    started.push(liveKit);
    const service: MediaService = await startMediaService(liveKit, {
      ...options.service,
      ...(servicePort === undefined ? {} : { PORT: String(servicePort) }),
    });
    started.push(service);
    const models: ModelStandIn = await startModelStandIn(options.models);
    started.push({ stop: () => models.close() });
    const workerEnv = typeof options.worker === 'function' ? options.worker(service) : (options.worker ?? {});
    let worker: AgentWorker = await startAgentWorker(liveKit, service, models.baseUrl, workerEnv);
    // Whichever worker is current when the file ends is the one stopped.
    started.push({ stop: () => worker.stop() });
    return {
      liveKit,
      service,
      models,
      rooms: new RoomServiceClient(liveKit.url, liveKit.apiKey, liveKit.apiSecret),
      get worker() {
        return worker;
      },
      /** A new worker in place of the current one (which a test has killed or stopped). */
      async replaceWorker(env: Record<string, string> = workerEnv) {
        worker = await startAgentWorker(liveKit, service, models.baseUrl, env);
        return worker;
      },
      /** The service's and the current worker's log lines that `about` picks, one a line: what a failing test prints. */
      linesAbout(about: (line: string) => boolean): string {
        return [...service.logs().split('\n'), ...worker.output().split('\n')].filter(about).join('\n');
      },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

export type MediaStack = Awaited<ReturnType<typeof startMediaStack>>;
