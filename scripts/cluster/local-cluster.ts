import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { openSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './redis-server.js';
import type { RestateServer } from './restate-server.js';
import { startRestateServer } from './restate-server.js';
import type { Proxy } from './round-robin.js';
import { httpRoundRobin, tcpRoundRobin } from './round-robin.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface ServiceProcess {
  port: number;
  endpointPort: number;
  pid: number;
  /** Sends the signal and waits for the exit. */
  kill(signal: NodeJS.Signals): Promise<void>;
}

export interface LocalCluster {
  /** The round-robin proxy in front of the service processes: where clients point. */
  url: string;
  restate: RestateServer;
  processes: ServiceProcess[];
  stop(): Promise<void>;
}

export interface LocalClusterOptions {
  /** The shared activity log (ACTIVITY_LOG). */
  redisUrl: string;
  processes: number;
  /** The proxy clients point at; a free port when absent. */
  frontPort?: number;
  /** More environment for the service processes (timer settings, LiveKit). */
  env?: Record<string, string>;
  /** Where the processes' and the server's output goes; discarded when absent. */
  logFile?: string;
}

async function waitForHealth(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service process exited with ${child.exitCode} (see its log)`);
    const up = await fetch(url)
      .then((response) => response.status < 500)
      .catch(() => false);
    if (up) return;
    if (Date.now() > deadline) throw new Error(`${url} did not answer within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * A cluster on this machine, every port on 127.0.0.1: one Restate server, `processes` service
 * processes with SESSION_HOST=restate (each a stateless HTTP front and a Restate endpoint), a
 * connection-level round-robin in front of the endpoints (registered with Restate as one
 * deployment) and a request-level round-robin in front of the HTTP fronts.
 */
export async function startLocalCluster(options: LocalClusterOptions): Promise<LocalCluster> {
  const port = freePort;
  const out = options.logFile ? openSync(options.logFile, 'a') : 'ignore';
  const restate = await startRestateServer({ ingress: await port(), admin: await port(), node: await port() }, options.logFile ? { logFile: options.logFile } : {});
  const children: ChildProcess[] = [];
  const proxies: Proxy[] = [];
  const stop = async () => {
    await Promise.all(proxies.map((proxy) => proxy.close()));
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      ),
    );
    await restate.stop();
  };
  try {
    const digestSecret = randomBytes(32).toString('hex');
    const processes: ServiceProcess[] = [];
    for (let index = 0; index < options.processes; index += 1) {
      const servicePort = await port();
      const endpointPort = await port();
      const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'main.ts')], {
        cwd: ROOT,
        env: {
          ...process.env,
          PORT: String(servicePort),
          HOST: '127.0.0.1',
          SESSION_HOST: 'restate',
          RESTATE_INGRESS_URL: restate.ingressUrl,
          RESTATE_ADMIN_URL: restate.adminUrl,
          RESTATE_ENDPOINT_PORT: String(endpointPort),
          ACTIVITY_LOG: options.redisUrl,
          // One for the whole cluster: every process keys an identity-looking session id alike.
          ID_DIGEST_SECRET: digestSecret,
          STORE: 'memory',
          // Every request reaches the processes from the proxy's address: per-IP limits would count all clients as one.
          RATE_LIMIT_PER_MINUTE: '0',
          LOG_LEVEL: 'warn',
          ...options.env,
        },
        stdio: ['ignore', out, out],
      });
      children.push(child);
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      processes.push({
        port: servicePort,
        endpointPort,
        pid: child.pid!,
        kill: async (signal) => {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          await exited;
        },
      });
    }
    await Promise.all(processes.map((service, index) => waitForHealth(`http://127.0.0.1:${service.port}/health`, children[index]!)));
    const endpoints = await tcpRoundRobin(
      processes.map((service) => service.endpointPort),
      await port(),
    );
    proxies.push(endpoints);
    await restate.register(`http://127.0.0.1:${endpoints.port}`);
    const front = await httpRoundRobin(
      processes.map((service) => service.port),
      options.frontPort ?? (await port()),
    );
    proxies.push(front);
    return { url: `http://127.0.0.1:${front.port}`, restate, processes, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
