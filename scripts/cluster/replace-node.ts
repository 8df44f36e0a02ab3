import { appendFileSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LocalCluster } from './local-cluster.js';
import { nodeAddresses, restatectl, snapshotAndTrim } from './snapshots.js';
import { PID_FILE, alive, followAccount } from './upgrade.js';

/**
 * `npm run cluster -- --replace-node N` (docs/how-to/production.md, "Replacing a failed node"): node
 * N of a running replicated cluster lost its disk, and a fresh node takes its slot. As
 * `--upgrade` does, the command asks the running script (SIGUSR2, with a request file), which
 * owns the nodes' processes, and prints its account.
 *
 * What Restate 1.7.12 needs, found by running it: a node that starts with an empty disk under the
 * old node name gets the old node id, its log server finds its data gone, marks it `data-loss` and
 * stops ("If this is a new node, please choose a different node-name"); `restatectl nodes
 * set-storage-state` refuses to leave `data-loss`. So the fresh node runs under a new name
 * (restate-2 becomes restate-2-r1) with the same ports and config: Restate gives it a new node id,
 * it joins the metadata cluster, its log server starts read-write and joins new nodesets, and its
 * partition processors start from the partitions' snapshots (the logs below them are trimmed).
 * The old id is then taken out: its log server marked read-only (no new nodeset picks it), out of
 * the metadata cluster, the logs whose tail segment still has it resealed, and, once a snapshot and
 * trim leave no log segment on it, removed (`restatectl nodes remove` refuses while a nodeset has it).
 */

/** The request `--replace-node` writes before it signals, beside the upgrade's (upgrade.ts). */
export const REPLACE_REQUEST_FILE = 'replace-request.json';
const LOG_FILE = 'replace-node.log';
const DONE = 'replacement done';
const FAILED = 'replacement failed';
/** How long the fresh node may take to be alive with its partition processors caught up. */
const CATCH_UP_MS = 120_000;
/** How long `restatectl nodes remove` may keep refusing while the old id's segments are trimmed away. */
const REMOVE_MS = 30_000;

/** The next name for a slot: `restate-2` becomes `restate-2-r1`, `restate-2-r1` becomes `restate-2-r2`. */
export function replacementName(name: string): string {
  const match = /^(.*)-r(\d+)$/.exec(name);
  return match ? `${match[1]}-r${Number(match[2]) + 1}` : `${name}-r1`;
}

/** `restatectl nodes list`: each node's id (N4 is 4) by name. */
function nodeIds(addresses: string[]): Map<string, number> {
  const listed = restatectl(addresses, ['nodes', 'list']).stdout;
  return new Map(
    [...listed.matchAll(/^\s*N(\d+)\s+\d+\s+(\S+)\s+http/gm)].map((row) => [row[2]!, Number(row[1])] as const),
  );
}

/** Whether node `id` is up and a metadata member (`restatectl status`), and its log server read-write. */
function joined(addresses: string[], id: number): boolean {
  const status = restatectl(addresses, ['status']).stdout;
  const row = new RegExp(`^\\s*N${id}:\\d+\\s+\\S+\\s+(\\S+)\\s+(\\S+)`, 'm').exec(status);
  if (row === null || row[1] === 'offline' || row[2] !== 'Member') return false;
  const servers = restatectl(addresses, ['replicated-loglet', 'list-servers']).stdout;
  return new RegExp(`^\\s*N${id}\\s+N${id}:\\d+\\s+read-write\\b`, 'm').test(servers);
}

/**
 * Node `id`'s partition processors (`restatectl partitions list`: ID NODE MODE STATUS EPOCH APPLIED
 * DURABLE ARCHIVED LSN-LAG), and whether each is active and caught up with its log.
 */
function processorsOn(addresses: string[], id: number): { partition: number; caughtUp: boolean }[] {
  const listed = restatectl(addresses, ['partitions', 'list']).stdout;
  return [
    ...listed.matchAll(
      new RegExp(`^\\s*(\\d+)\\s+N${id}:\\d+\\s+\\w+\\s+(\\w+)\\s+e\\d+\\s+\\S+\\s+\\S+\\s+\\S+\\s+(\\S+)`, 'gm'),
    ),
  ].map((row) => ({ partition: Number(row[1]), caughtUp: row[2] === 'Active' && row[3] === '0' }));
}

/** The logs whose tail segment has node `id` in its nodeset (`restatectl logs list`: L-ID SEGMENTS FROM KIND LOGLET-ID REPLICATION SEQUENCER NODESET). */
function logsOn(addresses: string[], id: number): number[] {
  const listed = restatectl(addresses, ['logs', 'list']).stdout;
  return [...listed.matchAll(/^\s*(\d+)\s+\d+\s+\d+\s+replicated\s+\S+\s+\{[^}]*\}\s+\S+\s+\[([^\]]*)\]/gm)]
    .filter((row) => row[2]!.split(',').some((node) => node.trim() === `N${id}`))
    .map((row) => Number(row[1]));
}

/** Checks every second until `check` holds; `what` names it in the error after `timeoutMs`. */
async function until(what: () => string, timeoutMs: number, check: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what()}: not within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** In the running script, on SIGUSR2 with a replace request: replaces node `slot` (1-based), saying each step. */
export async function replaceNode(
  cluster: LocalCluster,
  dataDir: string,
  slot: number,
  say: (line: string) => void,
): Promise<void> {
  const log = (line: string) => {
    appendFileSync(join(dataDir, LOG_FILE), `${line}\n`);
    say(line);
  };
  try {
    const old = cluster.restate.nodes[slot - 1];
    if (old === undefined || cluster.restate.replaceNode === undefined)
      throw new Error(`no Restate node ${slot} in a replicated cluster`);
    const addresses = nodeAddresses(dataDir);
    const oldId = nodeIds(addresses).get(old.name);
    const name = replacementName(old.name);
    log(
      `stopping ${old.name}${oldId === undefined ? '' : ` (N${oldId})`} pid ${old.pid} if it runs, ` +
        `deleting ${join(dataDir, 'restate-cluster', `restate-${slot}`)}`,
    );
    const fresh = await cluster.restate.replaceNode(slot - 1, name);
    log(
      `started ${name} pid ${fresh.pid} in its place: same ports (node-to-node :${fresh.ports.node}) and config, ` +
        `an empty disk, a new node name (Restate 1.7 refuses the old one: its log server's data is lost)`,
    );
    if (oldId !== undefined) {
      // No new nodeset picks a read-only log server. Restate 1.7 refuses `gone` from read-write and
      // from read-only as unsafe, and `data-loss` is what a node sets itself when it restarts empty.
      const marked = restatectl(addresses, [
        'nodes',
        'set-storage-state',
        '--nodes',
        String(oldId),
        '--storage-state',
        'read-only',
      ]);
      if (marked.status !== 0)
        throw new Error(
          `restatectl nodes set-storage-state --nodes ${oldId} --storage-state read-only: ${marked.stderr.trim()}`,
        );
      log(`N${oldId}'s log server marked read-only: no new nodeset takes it`);
    }
    let id: number | undefined;
    await until(
      () => `${name} in restatectl nodes list`,
      CATCH_UP_MS,
      () => (id = nodeIds(addresses).get(name)) !== undefined,
    );
    await until(
      () => `N${id} alive, a metadata member, its log server read-write`,
      CATCH_UP_MS,
      () => joined(addresses, id!),
    );
    log(`${name} is N${id}: alive, a metadata server member, its log server read-write`);
    let processors: { partition: number; caughtUp: boolean }[] = [];
    await until(
      () => `N${id}'s partition processors caught up`,
      CATCH_UP_MS,
      () => {
        processors = processorsOn(addresses, id!);
        return processors.length > 0 && processors.every((processor) => processor.caughtUp);
      },
    );
    log(
      `N${id} runs partition ${processors.map((processor) => processor.partition).join(', ')}, restored from their snapshots, caught up with their logs`,
    );
    if (oldId !== undefined && oldId !== id) {
      const left = restatectl(addresses, ['metadata-server', 'remove-node', String(oldId)]);
      // Already out when the metadata cluster dropped it itself.
      if (left.status !== 0 && !/not a member|not part/i.test(left.stderr))
        throw new Error(`restatectl metadata-server remove-node ${oldId}: ${left.stderr.trim()}`);
      log(`N${oldId} removed from the metadata cluster`);
      // A log whose tail segment's nodeset still has the old id: sealed, and a new segment started on the others.
      for (const logId of logsOn(addresses, oldId)) {
        const resealed = restatectl(addresses, ['logs', 'reconfigure', '--log-id', String(logId)]);
        if (resealed.status !== 0)
          throw new Error(`restatectl logs reconfigure --log-id ${logId}: ${resealed.stderr.trim()}`);
        log(`log ${logId}: its tail segment had N${oldId} in its nodeset; sealed, a new segment started without it`);
      }
      // Segments written while N${oldId} was in their nodeset go once the logs are trimmed past them.
      if (!(await snapshotAndTrim(dataDir, () => {}))) throw new Error('snapshotting and trimming the logs failed');
      log('every partition snapshotted, each log trimmed to its snapshot');
      // A log that took no new segment since keeps the old id in its tail segment's nodeset: sealing it
      // starts a segment on the writable nodes, and a trim past the sealed one lets the old id go.
      const deadline = Date.now() + REMOVE_MS;
      let removed = false;
      for (;;) {
        const result = restatectl(addresses, ['nodes', 'remove', '--nodes', String(oldId)]);
        removed = result.status === 0;
        if (removed) break;
        const refusal = result.stderr.trim().replace(/\s+/g, ' ');
        if (Date.now() > deadline) {
          // Nothing runs on it any more: it stays listed, dead, until a later `nodes remove` takes.
          log(
            `N${oldId} (${old.name}) stays listed, dead: restatectl nodes remove --nodes ${oldId} refused: ${refusal}`,
          );
          break;
        }
        const loglet = /loglet (\d+)_\d+/.exec(refusal);
        if (loglet !== null) {
          const resealed = restatectl(addresses, ['logs', 'reconfigure', '--log-id', loglet[1]!]);
          if (resealed.status !== 0)
            throw new Error(`restatectl logs reconfigure --log-id ${loglet[1]}: ${resealed.stderr.trim()}`);
          log(`log ${loglet[1]} still had N${oldId} in its nodeset: sealed, a new segment started without it`);
          if (!(await snapshotAndTrim(dataDir, () => {}))) throw new Error('snapshotting and trimming the logs failed');
        }
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      if (removed) log(`N${oldId} (${old.name}) removed from the cluster`);
    }
    log(DONE);
  } catch (error) {
    log(`${FAILED}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * `npm run cluster -- --replace-node N`: checks the cluster on `dataDir` can replace a node, asks it
 * to, and prints its account until the replacement ends. Resolves to whether it succeeded; a
 * refusal is one line.
 */
export async function requestReplacement(
  dataDir: string,
  slot: number,
  print: (line: string) => void,
): Promise<boolean> {
  const pidFile = join(dataDir, PID_FILE);
  const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : NaN;
  if (!Number.isInteger(pid) || !alive(pid)) {
    print(`no cluster is running on ${dataDir} (start one with npm run cluster)`);
    return false;
  }
  const clusterDir = join(dataDir, 'restate-cluster');
  if (!existsSync(join(clusterDir, 'ports.json'))) {
    print(
      `the cluster on ${dataDir} has a single Restate node: there is no other copy to replace it from (start it with --restate-nodes 3)`,
    );
    return false;
  }
  const slots = nodeAddresses(dataDir).length;
  if (!Number.isInteger(slot) || slot < 1 || slot > slots) {
    print(`--replace-node: a node of this cluster, 1-${slots}`);
    return false;
  }
  // A fresh node's partition processors start from a snapshot once the logs are trimmed.
  const config = join(clusterDir, `restate-${slot}`, 'restate.toml');
  if (existsSync(config) && !readFileSync(config, 'utf8').includes('[worker.snapshots]')) {
    print(
      `the cluster on ${dataDir} has no snapshot destination: a fresh node's partitions start from snapshots ` +
        `once logs are trimmed; start it with --snapshots-to s3://bucket/prefix`,
    );
    return false;
  }
  const logFile = join(dataDir, LOG_FILE);
  const offset = existsSync(logFile) ? statSync(logFile).size : 0;
  writeFileSync(join(dataDir, REPLACE_REQUEST_FILE), JSON.stringify({ slot }));
  process.kill(pid, 'SIGUSR2');
  return followAccount(
    logFile,
    offset,
    pid,
    { done: DONE, failed: FAILED, what: 'replacement' },
    print,
    3 * CATCH_UP_MS + REMOVE_MS + 60_000,
  );
}

/** The slot a pending replace request names, consumed; undefined when none is pending. */
export function takeReplaceRequest(dataDir: string): number | undefined {
  const file = join(dataDir, REPLACE_REQUEST_FILE);
  if (!existsSync(file)) return undefined;
  const { slot } = JSON.parse(readFileSync(file, 'utf8')) as { slot: number };
  rmSync(file, { force: true });
  return slot;
}
