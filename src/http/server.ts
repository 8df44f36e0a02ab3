import type { Server } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { App } from './app.js';

export interface RunningServer {
  server: Server;
  port: number;
  url: string;
  /** Stop accepting, let in-flight requests finish, then resolve; sockets still open after `graceMs` are cut. */
  close(graceMs: number): Promise<void>;
}

export async function listen(app: App, port: number, host: string, logger: Logger): Promise<RunningServer> {
  const server = createServer(app.express);
  server.on('upgrade', app.controlPlane.handleUpgrade);
  // Behind load balancers whose idle timeout is 60 s, a shorter keep-alive here causes resets.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${shownHost === '0.0.0.0' ? '127.0.0.1' : shownHost}:${address.port}`;
  logger.info({ port: address.port, host }, `listening on ${url}`);

  return {
    server,
    port: address.port,
    url,
    close: (graceMs) =>
      new Promise<void>((resolve) => {
        app.beginShutdown();
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
