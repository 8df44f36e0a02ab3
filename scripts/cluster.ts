import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalCluster } from './cluster/local-cluster.js';
import type { RedisServer } from './cluster/redis-server.js';
import { startRedis } from './cluster/redis-server.js';

/**
 * `npm run cluster`: a local cluster for trying cluster mode (docs/cluster-mode.md). Everything it
 * starts binds 127.0.0.1 and is stopped by Ctrl-C. CLUSTER_PORT sets the proxy's port (8090);
 * CLUSTER_PROCESSES the number of service processes (2); REDIS_URL uses a Redis already running
 * instead of starting one.
 */
async function main(): Promise<void> {
  const processes = Number(process.env.CLUSTER_PROCESSES ?? '2');
  const frontPort = Number(process.env.CLUSTER_PORT ?? '8090');
  if (!Number.isInteger(processes) || processes < 1 || processes > 8) throw new Error('CLUSTER_PROCESSES: must be 1-8');
  if (!Number.isInteger(frontPort) || frontPort < 1 || frontPort > 65_535) throw new Error('CLUSTER_PORT: must be a port number');
  const dir = mkdtempSync(join(tmpdir(), 'kyc-cluster-'));
  const logFile = join(dir, 'cluster.log');
  let redis: RedisServer | undefined;
  let redisUrl = process.env.REDIS_URL;
  if (redisUrl === undefined) {
    if (spawnSync('redis-server', ['--version']).status !== 0) {
      throw new Error('redis-server is not installed: `apt-get install redis-server` (or set REDIS_URL to a Redis you run)');
    }
    redis = await startRedis({ dir });
    redisUrl = redis.url;
  }
  process.stdout.write(`starting Restate, ${processes} service processes and the proxy (log: ${logFile})\n`);
  const cluster = await startLocalCluster({ redisUrl, processes, frontPort, logFile });
  process.stdout.write(
    [
      '',
      `cluster up: point clients at ${cluster.url}`,
      `  e.g. curl ${cluster.url}/health   or   npm run simulate -- --url ${cluster.url}`,
      ...cluster.processes.map((service) => `  service process pid ${service.pid}: http://127.0.0.1:${service.port} (Restate endpoint 127.0.0.1:${service.endpointPort})`),
      `  Restate server pid ${cluster.restate.pid}: ingress ${cluster.restate.ingressUrl} admin ${cluster.restate.adminUrl} (loopback only)`,
      `  Redis: ${redisUrl}`,
      `  try: kill -9 <a service pid>, and every journey still completes through the proxy`,
      'Ctrl-C stops everything started here.',
      '',
    ].join('\n'),
  );
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    process.stdout.write('stopping…\n');
    await cluster.stop();
    await redis?.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

main().catch((error: unknown) => {
  process.stderr.write(`npm run cluster: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
