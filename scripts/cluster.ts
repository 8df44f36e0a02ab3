import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { localPartitions, startLocalCluster } from './cluster/local-cluster.js';
import type { RedisServer } from './cluster/redis-server.js';
import { startRedis } from './cluster/redis-server.js';
import { CLUSTER_PARTITIONS, partitionsOf } from './cluster/restate-server.js';
import { replaceNode, requestReplacement, takeReplaceRequest } from './cluster/replace-node.js';
import { snapshotAndTrim } from './cluster/snapshots.js';
import { PID_FILE, requestUpgrade, rollOut } from './cluster/upgrade.js';

const USAGE = `npm run cluster [-- --fresh] [--data-dir DIR] [--processes N] [--fronts N] [--port PORT] [--restate-nodes N] [--partitions N] [--snapshots-to s3://BUCKET/PREFIX]
npm run cluster -- --upgrade [--data-dir DIR] [--release NAME]
npm run cluster -- --snapshot [--data-dir DIR]
npm run cluster -- --replace-node N [--data-dir DIR]

Starts, all on 127.0.0.1: redis-server, a Restate server (or with --restate-nodes 3, a replicated
cluster of three), N service processes (the built service,
dist/src/main.js) and a round-robin proxy in front of them; with --fronts N, N more processes that
serve the HTTP API only (CLUSTER_ROLE=front), and the proxy sends clients to those. Sessions, activity, the request-signing
key and the digest secret are kept in the data directory (default ./data/cluster) and found again
by the next run; --fresh deletes it first. A single Restate node gets one partition per core of
this machine, or --partitions N, when its data is first made. Ctrl-C stops every process it started.
--upgrade, while a cluster runs on the data directory: rolls the code just built out as a new
release (named for its code, or NAME) and retires the running one once nothing is pinned to it.
--snapshots-to: Restate writes partition snapshots to that S3 bucket and prefix, with the AWS_*
variables of the environment (AWS_ENDPOINT_URL for a local object store). --snapshot, while a cluster
started so runs on the data directory: snapshots every partition and trims each log up to its
snapshot (docs/how-to/production.md, "Snapshots and log trimming"). --replace-node N, while a cluster
started with --restate-nodes 3 and --snapshots-to runs on the data directory: node N lost its disk;
a fresh node with an empty one takes its place (docs/how-to/production.md, "Replacing a failed node").
Environment: CLUSTER_PROCESSES (2), CLUSTER_PORT (8090), CLUSTER_DATA_DIR, REDIS_URL (use a Redis
you run instead of starting one).`;

/** `npm run cluster` (docs/how-to/local-cluster.md): a local cluster for trying cluster mode. */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      fresh: { type: 'boolean', default: false },
      'data-dir': { type: 'string' },
      processes: { type: 'string' },
      fronts: { type: 'string' },
      port: { type: 'string' },
      'restate-nodes': { type: 'string' },
      partitions: { type: 'string' },
      upgrade: { type: 'boolean', default: false },
      release: { type: 'string' },
      snapshot: { type: 'boolean', default: false },
      'snapshots-to': { type: 'string' },
      'replace-node': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (values.upgrade) {
    const dir = resolve(values['data-dir'] ?? process.env.CLUSTER_DATA_DIR ?? join('data', 'cluster'));
    const upgraded = await requestUpgrade(dir, values.release, (line) => process.stdout.write(`${line}\n`));
    process.exit(upgraded ? 0 : 1);
  }
  if (values.snapshot) {
    const dir = resolve(values['data-dir'] ?? process.env.CLUSTER_DATA_DIR ?? join('data', 'cluster'));
    const done = await snapshotAndTrim(dir, (line) => process.stdout.write(`${line}\n`));
    process.exit(done ? 0 : 1);
  }
  if (values['replace-node'] !== undefined) {
    const dir = resolve(values['data-dir'] ?? process.env.CLUSTER_DATA_DIR ?? join('data', 'cluster'));
    const done = await requestReplacement(dir, Number(values['replace-node']), (line) =>
      process.stdout.write(`${line}\n`),
    );
    process.exit(done ? 0 : 1);
  }
  const snapshotsTo = values['snapshots-to'];
  // Restate 1.7 takes an object store only: with a file:// destination its node does not start ("Unsupported protocol").
  if (snapshotsTo !== undefined && !/^s3:\/\/[^/]+/.test(snapshotsTo))
    throw new Error(
      '--snapshots-to: an s3://bucket/prefix (Restate 1.7 has no local-directory destination; docs/how-to/production.md, "Snapshots and log trimming")',
    );
  if (values.release !== undefined) throw new Error('--release: names the release an --upgrade rolls out');
  const processes = Number(values.processes ?? process.env.CLUSTER_PROCESSES ?? '2');
  // With CLUSTER_PORT_RANGE and no port named, the front takes one from the range, as every other port does.
  const namedPort = values.port ?? process.env.CLUSTER_PORT ?? (process.env.CLUSTER_PORT_RANGE ? undefined : '8090');
  const frontPort = namedPort === undefined ? undefined : Number(namedPort);
  if (!Number.isInteger(processes) || processes < 1 || processes > 8)
    throw new Error('--processes (CLUSTER_PROCESSES): must be 1-8');
  const fronts = Number(values.fronts ?? '0');
  if (!Number.isInteger(fronts) || fronts < 0 || fronts > 8) throw new Error('--fronts: must be 0-8');
  const restateNodes = Number(values['restate-nodes'] ?? '1');
  if (!Number.isInteger(restateNodes) || restateNodes < 1 || restateNodes === 2 || restateNodes > 5)
    throw new Error(
      '--restate-nodes: must be 1, or 3-5 (a replicated cluster keeps two copies: it needs three nodes to lose one)',
    );
  const partitions = Number(values.partitions ?? localPartitions());
  if (!Number.isInteger(partitions) || partitions < 1 || partitions > 128)
    throw new Error('--partitions: must be 1-128');
  if (values.partitions !== undefined && restateNodes > 1)
    throw new Error(
      `--partitions: for a single Restate node; a replicated cluster has ${CLUSTER_PARTITIONS} (docs/explanation/cluster.md, "Partitions")`,
    );
  const badPort = frontPort !== undefined && (!Number.isInteger(frontPort) || frontPort < 1 || frontPort > 65_535);
  if (badPort) throw new Error('--port (CLUSTER_PORT): must be a port number');
  const dataDir = resolve(values['data-dir'] ?? process.env.CLUSTER_DATA_DIR ?? join('data', 'cluster'));
  if (values.fresh) rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  const logFile = join(dataDir, 'cluster.log');

  let redis: RedisServer | undefined;
  let redisUrl = process.env.REDIS_URL;
  if (redisUrl === undefined) {
    if (spawnSync('redis-server', ['--version']).status !== 0) {
      throw new Error(
        'redis-server is not installed: `apt-get install redis-server` (or set REDIS_URL to a Redis you run)',
      );
    }
    const redisDir = join(dataDir, 'redis');
    mkdirSync(redisDir, { recursive: true });
    redis = await startRedis({ dir: redisDir });
    redisUrl = redis.url;
  }
  process.stdout.write(
    `starting Restate (${restateNodes} node${restateNodes > 1 ? 's' : ''}), ${processes} service processes` +
      `${fronts > 0 ? `, ${fronts} front${fronts > 1 ? 's' : ''}` : ''} and the proxy (data: ${dataDir}, log: ${logFile})\n`,
  );
  let cluster;
  try {
    cluster = await startLocalCluster({
      redisUrl,
      processes,
      fronts,
      frontPort,
      logFile,
      dataDir,
      built: true,
      restateNodes,
      restatePartitions: partitions,
      ...(snapshotsTo === undefined ? {} : { snapshotsDestination: snapshotsTo }),
    });
  } catch (error) {
    await redis?.stop();
    throw error;
  }
  // A single node's count is fixed when its data is made: say what it runs, not what was asked.
  const running =
    cluster.restate.nodes.length === 1
      ? await partitionsOf(cluster.restate.nodes[0]!).catch(() => undefined)
      : undefined;
  process.stdout.write(
    [
      '',
      `cluster up: point clients at ${cluster.url}`,
      `  e.g. curl ${cluster.url}/health/ready   or   npm run simulate -- --url ${cluster.url}`,
      ...cluster.releases.map(
        (release) => `  release ${release.name}: Restate deployment ${release.deploymentId} at ${release.uri}`,
      ),
      ...cluster.processes.map(
        (service) =>
          `  service process pid ${service.pid}: http://127.0.0.1:${service.port} ` +
          `(Restate endpoint 127.0.0.1:${service.endpointPort}, signed calls only)` +
          `${cluster.fronts.length > 0 ? ', no clients sent here' : ''}`,
      ),
      ...cluster.fronts.map(
        (front) => `  front pid ${front.pid}: http://127.0.0.1:${front.port} (the HTTP API only, CLUSTER_ROLE=front)`,
      ),
      ...cluster.restate.nodes.map(
        (node) =>
          `  Restate node ${node.name} pid ${node.pid}: ingress :${node.ports.ingress} admin :${node.ports.admin} ` +
          `node-to-node :${node.ports.node} (loopback only)`,
      ),
      ...(running === undefined
        ? []
        : [
            `  Restate partitions: ${running}${running === partitions ? '' : ` (its data was made with ${running}; --fresh makes it anew with ${partitions})`}`,
          ]),
      ...(cluster.restate.nodes.length > 1
        ? [
            `  Restate through any node: ingress ${cluster.restate.ingressUrl} admin ${cluster.restate.adminUrl}; ` +
              `each node's restate.toml in ${join(dataDir, 'restate-cluster')}`,
          ]
        : []),
      ...(snapshotsTo === undefined
        ? []
        : [
            `  Restate snapshots: ${snapshotsTo} (npm run cluster -- --snapshot --data-dir ${dataDir} takes them and trims the logs)`,
          ]),
      redis
        ? `  redis-server pid ${redis.pid}: ${redis.url} (AOF in ${redis.dir})`
        : `  Redis: ${redisUrl} (not started here)`,
      `  request-signing key: ${cluster.signing.privateKeyFile} (public ${cluster.signing.publicKey})`,
      // Sessions run in the service processes: with one, killing it leaves none to run them.
      ...(cluster.processes.length > 1
        ? [`  try: kill -9 <a service pid>, and every journey still completes through the proxy`]
        : []),
      `  this script pid ${process.pid}: the proxy ${cluster.url}` +
        cluster.releases.map((release) => ` and the endpoint proxy ${new URL(release.uri).host}`).join(''),
      `Ctrl-C (or kill ${process.pid}, or kill the npm process) stops everything started here; ` +
        `the data stays in ${dataDir} for the next run (--fresh to start empty).`,
      '',
    ].join('\n'),
  );
  // What `--upgrade` (scripts/cluster/upgrade.ts) and `--replace-node` (scripts/cluster/replace-node.ts)
  // signal, each with its request file: one at a time.
  const pidFile = join(dataDir, PID_FILE);
  writeFileSync(pidFile, String(process.pid));
  let busy: Promise<void> | undefined;
  process.on('SIGUSR2', () => {
    const say = (line: string) => process.stdout.write(`${line}\n`);
    const slot = takeReplaceRequest(dataDir);
    busy ??= (
      slot === undefined ? rollOut(cluster, dataDir, processes, say) : replaceNode(cluster, dataDir, slot, say)
    ).finally(() => (busy = undefined));
  });
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    process.stdout.write('stopping…\n');
    rmSync(pidFile, { force: true });
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
