import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Launch } from './launch.js';
import { asGiven, launched } from './launch.js';
import { freePort, listenPort } from './redis-server.js';
import type { RestateServer } from './restate-server.js';
import { startRestateCluster, startRestateServer } from './restate-server.js';
import type { SigningKey } from './request-signing.js';
import { ensureSigningKey } from './request-signing.js';
import type { Proxy } from './round-robin.js';
import { httpRoundRobin, tcpRoundRobin } from './round-robin.js';
import { heapLimitMbFor } from '../../src/actor-system/memory-budget.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The flags `npm start` gives node: the old space held to the budget's heap share (docs/reference/limits.md). */
const heapFlags = (memoryBudgetMb: string | undefined): string[] => [
  `--max-old-space-size=${heapLimitMbFor(Number(memoryBudgetMb) || DEFAULT_MEMORY_BUDGET_MB)}`,
  '--no-allocation-site-pretenuring',
];
const DEFAULT_MEMORY_BUDGET_MB = 1024;

/** A front (CLUSTER_ROLE=front): the HTTP API only. */
export interface FrontProcess {
  port: number;
  pid: number;
  /** Sends the signal and waits for the exit. */
  kill(signal: NodeJS.Signals): Promise<void>;
}

/** A process of a release: an HTTP front and the session objects' endpoint. */
export interface ServiceProcess extends FrontProcess {
  endpointPort: number;
}

/**
 * One release of the service: its processes, and their endpoints behind one URI of their own,
 * registered with Restate as that release's deployment.
 */
export interface Release {
  name: string;
  processes: ServiceProcess[];
  uri: string;
  deploymentId: string;
}

export interface ReleaseOptions {
  processes: number;
  /** The service's entry (a file run through tsx) when not the service itself: a release built with other state migrations. */
  entry?: string;
  /** A built copy of the service to run (its `dist/src/main.js`), when not this tree's: a release rolled out by an upgrade (upgrade.ts). */
  main?: string;
  /** More environment for this release's processes. */
  env?: Record<string, string>;
  /** Where its endpoints' proxy listens; a free port when absent. */
  endpointsPort?: number;
}

export interface LocalCluster {
  /** The round-robin proxy in front of the service processes: where clients point. */
  url: string;
  restate: RestateServer;
  /** The first release's processes. */
  processes: ServiceProcess[];
  /** The fronts (LocalClusterOptions.fronts): when there are any, the proxy clients point at sends to them only. */
  fronts: FrontProcess[];
  /** Every release running, oldest first (a retired one leaves the list). */
  releases: Release[];
  /**
   * Rolls a new release out: starts its processes, registers their URI as a new deployment (new
   * invocations go there; those already started stay on theirs) and adds them to the front.
   */
  release(name: string, options: ReleaseOptions): Promise<Release>;
  /**
   * Takes a release out: off the front, then, once no invocation is pinned to its deployment
   * (bounded wait), its deployment removed and its processes stopped.
   */
  retire(release: Release, timeoutMs?: number): Promise<void>;
  /** The key the Restate server signs its calls with; the service processes take only calls it signed. */
  signing: SigningKey;
  /** Where the Restate server's data and the signing key are kept. */
  dataDir: string;
  stop(): Promise<void>;
}

export interface LocalClusterOptions {
  /** The shared activity log (ACTIVITY_LOG). */
  redisUrl: string;
  processes: number;
  /**
   * Processes that serve the HTTP API only (CLUSTER_ROLE=front), started after the first release:
   * clients are sent to them, and the release's processes only run invocations (docs/explanation/cluster.md,
   * "Fronts"). None by default: every process does both.
   */
  fronts?: number;
  /** The proxy clients point at; a free port when absent. */
  frontPort?: number;
  /** More environment for the service processes (timer settings, LiveKit). */
  env?: Record<string, string>;
  /** Where the processes' and the server's output goes; discarded when absent. */
  logFile?: string;
  /**
   * Where Restate's data, the signing key and the Restate ports are kept, to start again on the
   * same sessions; absent, a temporary directory removed when the cluster stops.
   */
  dataDir?: string;
  /** Run the built service (`dist/src/main.js`, `npm run build` first) instead of the sources through tsx. */
  built?: boolean;
  /** Restate nodes: 1 (the default), or a replicated cluster of 3 or more (docs/how-to/production.md, Production). */
  restateNodes?: number;
  /**
   * A single Restate node's partitions, when its data is first made (later runs keep that count):
   * by default one per core of this machine (docs/explanation/cluster.md, "Partitions").
   */
  restatePartitions?: number;
  /** The first release's name (its deployment's URI path); by default one named for the code it runs, so a rebuilt service is a new deployment. */
  release?: string;
  /** The first release's entry (see ReleaseOptions). */
  entry?: string;
  /** How the Restate server(s) and the service processes are started (the bench pins them to its servers' cores). */
  launch?: Launch;
  /**
   * Where Restate writes partition snapshots, an `s3://bucket/prefix` (docs/how-to/production.md, "Snapshots and
   * log trimming"); the AWS_* variables of this process's environment reach the Restate nodes. None when absent.
   */
  snapshotsDestination?: string;
}

/** A name for the code a process runs: the same code, the same name (and deployment URI); changed code, a new one. */
function codeRelease(built: boolean): string {
  return releaseNameOf(built ? join(ROOT, 'dist', 'src') : join(ROOT, 'src'));
}

/** The release name of the code under `root` (its files' names and bytes). */
export function releaseNameOf(root: string): string {
  const hash = createHash('sha256');
  for (const file of (readdirSync(root, { recursive: true }) as string[]).sort()) {
    const path = join(root, file);
    if (statSync(path).isFile()) hash.update(file).update(readFileSync(path));
  }
  return `r-${hash.digest('hex').slice(0, 12)}`;
}

interface KeptPorts {
  ingress: number;
  admin: number;
  node: number;
}

/** One ID_DIGEST_SECRET for the cluster, kept with its data: sessions keyed by an identity-looking id are found again after a restart. */
function keptSecret(dir: string): string {
  const file = join(dir, 'id-digest.secret');
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}

/** Ports kept in `dir/file` by an earlier run on the same data, if any. */
function readKept<T>(dir: string, file: string): T | undefined {
  const path = join(dir, file);
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as T) : undefined;
}

const keep = (dir: string, file: string, ports: unknown) => writeFileSync(join(dir, file), JSON.stringify(ports));

/** Restate's ports as kept in `dir/file`, or free ones, then kept: a node started again on its data keeps its address. */
async function keptPorts<T>(dir: string, file: string, fresh: () => Promise<T>): Promise<T> {
  const kept = readKept<T>(dir, file);
  if (kept !== undefined) return kept;
  const ports = await fresh();
  keep(dir, file, ports);
  return ports;
}
const nodePorts = async (): Promise<KeptPorts> => ({
  ingress: await freePort(),
  admin: await freePort(),
  node: await freePort(),
});

/** One Restate server (data in `dataDir/restate`), or a replicated cluster (each node's data and restate.toml in `dataDir/restate-cluster/restate-N`). */
async function startRestate(
  dataDir: string,
  nodes: number,
  partitions: number,
  signing: SigningKey,
  logFile: string | undefined,
  launch: Launch,
  snapshotsDestination: string | undefined,
): Promise<RestateServer> {
  const nodeOptions = {
    launch,
    ...(logFile ? { logFile } : {}),
    ...(snapshotsDestination === undefined ? {} : { snapshotsDestination }),
  };
  if (nodes === 1) {
    mkdirSync(join(dataDir, 'restate'), { recursive: true });
    return startRestateServer(await keptPorts(dataDir, 'restate-ports.json', nodePorts), {
      dataDir: join(dataDir, 'restate'),
      signingKeyFile: signing.privateKeyFile,
      partitions,
      ...nodeOptions,
    });
  }
  const clusterDir = join(dataDir, 'restate-cluster');
  mkdirSync(clusterDir, { recursive: true });
  const kept = await keptPorts(clusterDir, 'ports.json', async () => {
    const each: KeptPorts[] = [];
    for (let index = 0; index < nodes; index += 1) each.push(await nodePorts());
    return { nodes: each, front: { ingress: await freePort(), admin: await freePort() } };
  });
  if (kept.nodes.length !== nodes)
    throw new Error(
      `${clusterDir} holds a cluster of ${kept.nodes.length} Restate nodes, not ${nodes}: start it with that many, or start fresh`,
    );
  return startRestateCluster(kept.nodes, {
    dataDir: clusterDir,
    signingKeyFile: signing.privateKeyFile,
    frontPorts: kept.front,
    ...nodeOptions,
  });
}

/**
 * One partition per core. Each partition is a processor thread with its own share of storage work
 * and timers: Restate's default of 24 is sized for a cluster of machines, and on a 2-core machine
 * 24 threads waiting for two cores cost Restate 1.7 ms of CPU per ingested event against 1.0 ms
 * with 2 (docs/explanation/cluster.md, "Partitions"; docs/decisions/0021-restate-partitions-and-client.md).
 */
export const localPartitions = (): number => availableParallelism();

async function waitForHealth(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service process exited with ${child.exitCode} (see its log)`);
    // A first connection taken while the process is still starting may never be answered: ask again.
    const up = await fetch(url, { signal: AbortSignal.timeout(5000) })
      .then((response) => response.status < 500)
      .catch(() => false);
    if (up) return;
    if (Date.now() > deadline) throw new Error(`${url} did not answer within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * A cluster on this machine, every port on 127.0.0.1: one Restate server (or a replicated
 * cluster of `restateNodes`), `processes` service processes with SESSION_HOST=restate (each a
 * stateless HTTP front and a Restate endpoint; with `fronts`, that many processes serve the HTTP
 * API alone), a connection-level round-robin in front of the endpoints (registered with Restate
 * as the release's deployment) and a request-level round-robin in front of the HTTP fronts.
 */
export async function startLocalCluster(options: LocalClusterOptions): Promise<LocalCluster> {
  const port = freePort;
  const out = options.logFile ? openSync(options.logFile, 'a') : 'ignore';
  const ownDir = options.dataDir === undefined ? mkdtempSync(join(tmpdir(), 'kyc-cluster-')) : undefined;
  const dataDir = options.dataDir ?? ownDir!;
  const signing = ensureSigningKey(dataDir);
  const launch = options.launch ?? asGiven;
  const restate = await startRestate(
    dataDir,
    options.restateNodes ?? 1,
    options.restatePartitions ?? localPartitions(),
    signing,
    options.logFile,
    launch,
    options.snapshotsDestination,
  );
  const children: ChildProcess[] = [];
  const proxies: Proxy[] = [];
  /** The HTTP fronts the front proxy sends to, changed in place as releases come and go. */
  const fronts: number[] = [];
  const releases: Release[] = [];
  const releaseProxies = new Map<Release, Proxy>();
  const stopChild = (child: ChildProcess) =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  const stop = async () => {
    await Promise.all([...proxies, ...releaseProxies.values()].map((proxy) => proxy.close()));
    await Promise.all(children.map(stopChild));
    await restate.stop();
    if (ownDir) rmSync(ownDir, { recursive: true, force: true });
  };
  const digestSecret = keptSecret(dataDir);
  const spawnProcess = async (
    release: ReleaseOptions,
    role: 'both' | 'front' = 'both',
  ): Promise<ServiceProcess & { child: ChildProcess }> => {
    const servicePort = await port();
    const endpointPort = await port();
    // A front serves no endpoint: neither its port nor the keys it would check signatures with.
    const endpointEnv =
      role === 'both'
        ? { RESTATE_ENDPOINT_PORT: String(endpointPort), RESTATE_IDENTITY_KEYS: signing.publicKey }
        : { CLUSTER_ROLE: 'front' };
    const entry = release.main
      ? [release.main]
      : release.entry
        ? ['--import', 'tsx', release.entry]
        : options.built
          ? [join(ROOT, 'dist', 'src', 'main.js')]
          : ['--import', 'tsx', join(ROOT, 'src', 'main.ts')];
    const budget = release.env?.MEMORY_BUDGET_MB ?? options.env?.MEMORY_BUDGET_MB ?? process.env.MEMORY_BUDGET_MB;
    const child = spawn(...launched(launch, [process.execPath, ...heapFlags(budget), ...entry]), {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(servicePort),
        HOST: '127.0.0.1',
        SESSION_HOST: 'restate',
        RESTATE_INGRESS_URL: restate.ingressUrl,
        RESTATE_ADMIN_URL: restate.adminUrl,
        ...endpointEnv,
        ACTIVITY_LOG: options.redisUrl,
        // One for the whole cluster: every process keys an identity-looking session id alike.
        ID_DIGEST_SECRET: digestSecret,
        STORE: 'memory',
        // Every request reaches the processes from the proxy's address: per-IP limits would count all clients as one.
        RATE_LIMIT_PER_MINUTE: '0',
        LOG_LEVEL: 'warn',
        ...options.env,
        ...release.env,
      },
      stdio: ['ignore', out, out],
    });
    children.push(child);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    return {
      child,
      port: servicePort,
      endpointPort,
      pid: child.pid!,
      kill: async (signal) => {
        if (child.exitCode === null && child.signalCode === null) child.kill(signal);
        await exited;
      },
    };
  };
  // A process binds ports chosen for it before it started; one that exited before answering most
  // likely found one taken meanwhile, and is started again on new ones (at most three times).
  const answeringProcess = async (releaseOptions: ReleaseOptions, role: 'both' | 'front') => {
    for (let attempt = 1; ; attempt += 1) {
      const service = await spawnProcess(releaseOptions, role);
      try {
        await waitForHealth(`http://127.0.0.1:${service.port}/health`, service.child);
        return service;
      } catch (error) {
        if (service.child.exitCode === null || attempt === 3) throw error;
      }
    }
  };
  /** Dedicated fronts, once started: then releases' processes are not sent clients. */
  const frontProcesses: FrontProcess[] = [];
  const release = async (name: string, releaseOptions: ReleaseOptions): Promise<Release> => {
    if (!/^[a-z0-9][a-z0-9.-]*$/.test(name))
      throw new Error(`release name ${JSON.stringify(name)}: lower-case letters, digits, dots and dashes`);
    // Bound first, on its kept port or one the system picks as it binds (listenPort): a port chosen
    // early and bound later can be taken meanwhile, an outgoing connection's ephemeral port among them.
    const endpointPorts: number[] = [];
    const endpoints = await tcpRoundRobin(endpointPorts, releaseOptions.endpointsPort ?? (await listenPort()));
    const answering = () => answeringProcess(releaseOptions, 'both');
    let started;
    try {
      started = await Promise.all(Array.from({ length: releaseOptions.processes }, answering));
    } catch (error) {
      await endpoints.close();
      throw error;
    }
    endpointPorts.push(...started.map((service) => service.endpointPort));
    const processes = started.map(({ child: _child, ...service }) => service);
    // Its own URI: Restate keeps each release's deployment apart, and a URI registered before answers with what it found then.
    const uri = `http://127.0.0.1:${endpoints.port}/${name}/`;
    const made: Release = { name, processes, uri, deploymentId: await restate.register(uri) };
    releaseProxies.set(made, endpoints);
    releases.push(made);
    if (frontProcesses.length === 0) fronts.push(...processes.map((service) => service.port));
    return made;
  };
  const retire = async (gone: Release, timeoutMs = 30_000) => {
    for (const service of gone.processes) {
      const at = fronts.indexOf(service.port);
      if (at >= 0) fronts.splice(at, 1);
    }
    const deadline = Date.now() + timeoutMs;
    while ((await restate.pinnedTo(gone.deploymentId)) > 0) {
      if (Date.now() > deadline)
        throw new Error(`release ${gone.name}: invocations still pinned to ${gone.deploymentId} after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await restate.remove(gone.deploymentId);
    await releaseProxies.get(gone)?.close();
    releaseProxies.delete(gone);
    releases.splice(releases.indexOf(gone), 1);
    await Promise.all(gone.processes.map((service) => service.kill('SIGTERM')));
  };
  try {
    // Kept with the data: the same code started again is the same URI, so the same deployment.
    const endpointsPort = readKept<{ port: number }>(dataDir, 'endpoints-port.json')?.port;
    const first = await release(options.release ?? codeRelease(options.built ?? false), {
      processes: options.processes,
      ...(endpointsPort !== undefined ? { endpointsPort } : {}),
      ...(options.entry ? { entry: options.entry } : {}),
    });
    // Kept once bound (release), not chosen ahead of it.
    if (endpointsPort === undefined) keep(dataDir, 'endpoints-port.json', { port: releaseProxies.get(first)!.port });
    // Deployments of earlier runs with nothing left pinned to them are retired; one still pinned waits for a later run.
    for (const deployment of await restate.deployments()) {
      if (deployment.id !== first.deploymentId && (await restate.pinnedTo(deployment.id)) === 0)
        await restate.remove(deployment.id);
    }
    if ((options.fronts ?? 0) > 0) {
      const started = await Promise.all(
        Array.from({ length: options.fronts! }, () =>
          answeringProcess(options.entry ? { processes: 1, entry: options.entry } : { processes: 1 }, 'front'),
        ),
      );
      frontProcesses.push(...started.map(({ child: _child, endpointPort: _none, ...front }) => front));
      fronts.splice(0, fronts.length, ...frontProcesses.map((front) => front.port));
    }
    const front = await httpRoundRobin(fronts, options.frontPort ?? (await listenPort()));
    proxies.push(front);
    return {
      url: `http://127.0.0.1:${front.port}`,
      restate,
      processes: first.processes,
      fronts: frontProcesses,
      releases,
      release,
      retire,
      signing,
      dataDir,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
