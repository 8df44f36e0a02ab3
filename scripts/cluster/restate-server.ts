import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureRestateBinary } from './restate-binary.js';
import type { RestateNodeSettings } from './restate-config.js';
import { restateNodeToml } from './restate-config.js';
import type { Proxy } from './round-robin.js';
import { tcpRoundRobin } from './round-robin.js';
import { waitUntilAnswering } from '../wait-until-answering.js';
import type { Launch } from './launch.js';
import { asGiven, launched } from './launch.js';

/** The server binary, installed into its cache the first time (about 216 MB, a minute or two). */
export function ensureRestateServer(log: (line: string) => void = () => {}): string {
  return ensureRestateBinary('restate-server', log);
}

export interface RestatePorts {
  ingress: number;
  admin: number;
  /** Node-to-node (message fabric). */
  node: number;
}

export interface RestateNode {
  name: string;
  ports: RestatePorts;
  pid: number;
  /** Sends the signal and waits for the exit. */
  kill(signal: NodeJS.Signals): Promise<void>;
}

export interface RestateServer {
  /** One node's ingress, or a connection round-robin over every node's. */
  ingressUrl: string;
  adminUrl: string;
  /** The first node's PID. */
  pid: number;
  nodes: RestateNode[];
  /**
   * Registers the endpoints at `uri` as a deployment, never overwriting one (docs/how-to/production.md,
   * "Upgrades: one deployment per release"): a URI already registered answers with its deployment
   * as it was discovered then, so each release needs its own URI. Returns the deployment's id.
   */
  register(uri: string): Promise<string>;
  /** Invocations pinned to the deployment that have not completed: it may be retired once none is left. */
  pinnedTo(deploymentId: string): Promise<number>;
  /** Every deployment registered: id and URI. */
  deployments(): Promise<{ id: string; uri: string }[]>;
  /** Removes a deployment (Restate 1.7 removes only with `force`: call it once nothing is pinned to it). */
  remove(deploymentId: string): Promise<void>;
  /** Restate's SQL over its own tables (admin API `POST /query`). */
  query<Row>(sql: string): Promise<Row[]>;
  /**
   * A replicated cluster only: kills node `index` (0-based) if it still runs, deletes its data
   * directory, and starts a fresh node in its slot under `name`, with the same ports and config
   * and an empty disk (scripts/cluster/replace-node.ts says why the name is new). Resolves once its
   * admin API answers.
   */
  replaceNode?(index: number, name: string): Promise<RestateNode>;
  stop(): Promise<void>;
}

/**
 * How many partitions a node runs, as its metrics name them (each partition processor reports
 * under its id). Read until two reads agree: a node that has just answered may not have started
 * every partition processor yet.
 */
export async function partitionsOf(node: RestateNode): Promise<number> {
  let before = -1;
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const metrics = await fetch(`http://127.0.0.1:${node.ports.node}/metrics`)
      .then((response) => response.text())
      .catch(() => '');
    const count = new Set([...metrics.matchAll(/partition="(\d+)"/g)].map((match) => match[1])).size;
    if (count > 0 && count === before) return count;
    before = count;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  return before;
}

const restateEnv = (signingKeyFile?: string) => ({
  ...process.env,
  // Every call to an endpoint carries a JWT signed with this key; endpoints refuse any other.
  ...(signingKeyFile ? { RESTATE_WORKER__INVOKER__REQUEST_IDENTITY_PRIVATE_KEY_PEM_FILE: signingKeyFile } : {}),
  RESTATE_DISABLE_TELEMETRY: 'true',
  DO_NOT_TRACK: '1',
});

/** Starts one node and waits for its admin API to answer. */
async function startNode(
  name: string,
  ports: RestatePorts,
  args: string[],
  env: NodeJS.ProcessEnv,
  logFile: string | undefined,
  launch: Launch = asGiven,
): Promise<RestateNode> {
  const bin = ensureRestateServer((line) => process.stderr.write(`${line}\n`));
  const out = logFile ? openSync(logFile, 'a') : 'ignore';
  const child = spawn(...launched(launch, [bin, '--no-logo', '--listen-mode', 'tcp', ...args]), {
    env,
    stdio: ['ignore', out, out],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitUntilAnswering(child, `http://127.0.0.1:${ports.admin}/health`, `restate-server ${name}`, 60_000);
  return {
    name,
    ports,
    pid: child.pid!,
    async kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

/** The admin API's calls this project makes, through any node. */
function adminCalls(
  adminUrl: string,
): Pick<RestateServer, 'register' | 'pinnedTo' | 'deployments' | 'remove' | 'query'> {
  const query = async <Row>(sql: string) => {
    const response = await fetch(`${adminUrl}query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query: sql }),
    });
    if (!response.ok) throw new Error(`query: ${response.status} ${await response.text()}`);
    return ((await response.json()) as { rows: Row[] }).rows;
  };
  return {
    async register(uri) {
      for (let attempt = 0; ; attempt += 1) {
        const response = await fetch(`${adminUrl}deployments`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ uri }),
        }).catch(() => undefined);
        if (response?.ok) return ((await response.json()) as { id: string }).id;
        // Just after start the server (or a new cluster, until provisioned) may not yet accept registrations.
        if (attempt >= 150)
          throw new Error(
            `registering ${uri}: ${response ? `${response.status} ${await response.text()}` : 'no answer'}`,
          );
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    },
    async pinnedTo(deploymentId) {
      const rows = await query<{ n: number }>(
        `SELECT count(*) AS n FROM sys_invocation WHERE pinned_deployment_id = '${deploymentId}' AND status != 'completed'`,
      );
      return Number(rows[0]?.n ?? 0);
    },
    async deployments() {
      const response = await fetch(`${adminUrl}deployments`);
      if (!response.ok) throw new Error(`deployments: ${response.status} ${await response.text()}`);
      return ((await response.json()) as { deployments: { id: string; uri: string }[] }).deployments.map(
        ({ id, uri }) => ({ id, uri }),
      );
    },
    async remove(deploymentId) {
      const response = await fetch(`${adminUrl}deployments/${deploymentId}?force=true`, { method: 'DELETE' });
      if (!response.ok) throw new Error(`removing ${deploymentId}: ${response.status} ${await response.text()}`);
    },
    query,
  };
}

/**
 * One Restate server with every port on 127.0.0.1 and its data in `dataDir` (by default a fresh
 * temp dir, removed when the server stops). Telemetry and release checks are off: nothing leaves
 * the machine.
 */
export async function startRestateServer(
  ports: RestatePorts,
  options: {
    dataDir?: string;
    logFile?: string;
    signingKeyFile?: string;
    launch?: Launch;
    partitions?: number;
    /** Where partition snapshots go (docs/how-to/production.md, "Snapshots and log trimming"); none when absent. */
    snapshotsDestination?: string;
  } = {},
): Promise<RestateServer> {
  // A data directory made here is this server's alone: it goes when the server stops.
  const ownDataDir = options.dataDir === undefined ? mkdtempSync(join(tmpdir(), 'restate-')) : undefined;
  const dataDir = options.dataDir ?? ownDataDir!;
  const node = await startNode(
    'restate-1',
    ports,
    [
      '--base-dir',
      dataDir,
      '--bind-address',
      `127.0.0.1:${ports.node}`,
      '--advertised-address',
      `http://127.0.0.1:${ports.node}`,
    ],
    {
      ...restateEnv(options.signingKeyFile),
      RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ports.ingress}`,
      RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${ports.admin}`,
      // Read when the node provisions its data only: a kept data directory keeps the count it was made with.
      ...(options.partitions === undefined ? {} : { RESTATE_DEFAULT_NUM_PARTITIONS: String(options.partitions) }),
      ...(options.snapshotsDestination === undefined
        ? {}
        : { RESTATE_WORKER__SNAPSHOTS__DESTINATION: options.snapshotsDestination }),
    },
    options.logFile,
    options.launch,
  );
  const adminUrl = `http://127.0.0.1:${ports.admin}/`;
  return {
    ingressUrl: `http://127.0.0.1:${ports.ingress}/`,
    adminUrl,
    pid: node.pid,
    nodes: [node],
    ...adminCalls(adminUrl),
    async stop() {
      await node.kill('SIGTERM');
      if (ownDataDir) rmSync(ownDataDir, { recursive: true, force: true });
    },
  };
}

/** Copies of everything a replicated cluster keeps: two, so one node of three may be lost. */
export const CLUSTER_REPLICATION = 2;

/** The partitions of a replicated local cluster: its nodes share one machine (docs/explanation/cluster.md, "Partitions"). */
export const CLUSTER_PARTITIONS = 8;

/**
 * The node name kept in slot `index`'s restate.toml, else `restate-<index+1>`. A replaced node runs
 * under a new name (replace-node.ts), and its data lies under that name in the slot's base
 * directory: restarted under the old name, it would find no data.
 */
function keptNodeName(clusterDir: string, index: number): string {
  const configFile = join(clusterDir, `restate-${index + 1}`, 'restate.toml');
  const kept = existsSync(configFile)
    ? /^node-name = "([^"]+)"/m.exec(readFileSync(configFile, 'utf8'))?.[1]
    : undefined;
  return kept ?? `restate-${index + 1}`;
}

/**
 * A replicated Restate cluster of `ports.length` nodes on 127.0.0.1, each with its own data
 * directory under `dataDir` and its `restate.toml` written there (restate-config.ts), the first
 * provisioning the cluster. Clients reach it through connection round-robins over every node's
 * ingress and admin API, as they would through a load balancer, so losing one node loses no
 * address.
 */
export async function startRestateCluster(
  ports: RestatePorts[],
  options: {
    dataDir: string;
    signingKeyFile: string;
    logFile?: string;
    frontPorts?: { ingress: number; admin: number };
    launch?: Launch;
    /** Where partition snapshots go, in each node's restate.toml; none when absent. */
    snapshotsDestination?: string;
  },
): Promise<RestateServer> {
  const nodes: RestateNode[] = [];
  const proxies: Proxy[] = [];
  const stop = async () => {
    await Promise.all(proxies.map((proxy) => proxy.close()));
    await Promise.all(nodes.map((node) => node.kill('SIGTERM')));
  };
  const peers = ports.map((port) => `http://127.0.0.1:${port.node}/`);
  /** Writes node `index`'s restate.toml into its slot directory and starts it. */
  const launchNode = async (index: number, name: string, provisions: boolean): Promise<RestateNode> => {
    const port = ports[index]!;
    const dir = join(options.dataDir, `restate-${index + 1}`);
    mkdirSync(dir, { recursive: true });
    const configFile = join(dir, 'restate.toml');
    const settings: RestateNodeSettings = {
      clusterName: 'kyc-cluster',
      nodeName: name,
      advertisedAddress: peers[index]!,
      bindAddress: `127.0.0.1:${port.node}`,
      metadataAddresses: peers,
      autoProvision: provisions,
      replication: Math.min(CLUSTER_REPLICATION, ports.length),
      partitions: CLUSTER_PARTITIONS,
      ingressBindAddress: `127.0.0.1:${port.ingress}`,
      adminBindAddress: `127.0.0.1:${port.admin}`,
      signingKeyFile: options.signingKeyFile,
      rocksdbMemory: '256 MiB',
      ...(options.snapshotsDestination === undefined ? {} : { snapshotsDestination: options.snapshotsDestination }),
    };
    writeFileSync(configFile, restateNodeToml(settings));
    return startNode(
      name,
      port,
      ['--config-file', configFile, '--base-dir', dir],
      restateEnv(),
      options.logFile,
      options.launch,
    );
  };
  try {
    // The front's ports are bound before any node starts. Bound after, one could already be the
    // local port of a connection the nodes opened meanwhile (a port picked by freePort is from
    // the system's ephemeral range): listen then fails with EADDRINUSE. A proxy bound early only
    // connects to the nodes when a client comes.
    const ingress = await tcpRoundRobin(
      ports.map((port) => port.ingress),
      options.frontPorts?.ingress ?? 0,
    );
    proxies.push(ingress);
    const admin = await tcpRoundRobin(
      ports.map((port) => port.admin),
      options.frontPorts?.admin ?? 0,
    );
    proxies.push(admin);
    // Started together: a node that is not provisioning waits for the metadata servers of the others.
    const started = await Promise.all(
      ports.map(async (_, index) => {
        const name = keptNodeName(options.dataDir, index);
        // The first node of a new cluster provisions it; a replacement in its slot joins.
        const node = await launchNode(index, name, name === 'restate-1');
        nodes.push(node);
        return node;
      }),
    );
    const adminUrl = `http://127.0.0.1:${admin.port}/`;
    return {
      ingressUrl: `http://127.0.0.1:${ingress.port}/`,
      adminUrl,
      pid: started[0]!.pid,
      nodes: started,
      ...adminCalls(adminUrl),
      async replaceNode(index, name) {
        const old = started[index];
        if (old === undefined) throw new Error(`no Restate node ${index + 1} in this cluster`);
        await old.kill('SIGKILL');
        rmSync(join(options.dataDir, `restate-${index + 1}`), { recursive: true, force: true });
        // It joins a provisioned cluster: provisioning again is for a new cluster only.
        const node = await launchNode(index, name, false);
        started[index] = node;
        nodes.splice(nodes.indexOf(old), 1, node);
        return node;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
