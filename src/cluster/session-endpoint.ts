import { createServer } from 'node:http2';
import { createEndpointHandler } from '@restatedev/restate-sdk';
import type { Logger } from 'pino';
import type { SessionEndpointConfig } from '../config.js';

/** What the endpoint serves: the session objects and the objects beside them (cluster-system.ts). */
export type EndpointServices = Parameters<typeof createEndpointHandler>[0]['services'];

export interface SessionEndpoint {
  port: number;
  close(): Promise<void>;
}

/**
 * The session objects' endpoint, which the Restate server calls (HTTP/2). Never `restate.serve()`:
 * it listens on every interface, and this endpoint must be reachable by the Restate server only.
 */
export async function serveSessionEndpoint(
  services: EndpointServices,
  { host, port, identityKeys }: SessionEndpointConfig,
  logger: Logger,
): Promise<SessionEndpoint> {
  const server = createServer(
    createEndpointHandler({
      services,
      // Only calls signed by one of these Restate servers' keys are taken; anything else is answered 401.
      identityKeys,
      logger: (meta, message, ...rest) => {
        // The SDK logs every invocation at info: that is debug detail for this service.
        // The SDK's level is a string enum it exports as a type only: compared as the string it is.
        const sdkLevel: string = meta.level;
        const level = sdkLevel === 'warn' ? 'warn' : sdkLevel === 'error' ? 'error' : 'debug';
        // Two lines an invocation reach here: made into text only when the level writes them.
        if (!logger.isLevelEnabled(level)) return;
        logger[level](
          { invocation_id: meta.context?.invocationId },
          [message, ...(rest as unknown[])].map(String).join(' '),
        );
      },
    }),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Restate keeps its HTTP/2 connections open; closing waits for none of them.
        setTimeout(resolve, 1000).unref();
      }),
  };
}
