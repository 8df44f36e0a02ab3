import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureRestateBinary } from './restate-binary.js';
import { PID_FILE } from './upgrade.js';

/**
 * `npm run cluster -- --snapshot` (docs/how-to/production.md, "Snapshots and log trimming"): for the
 * cluster running on a data directory, restatectl snapshots every partition into the snapshot
 * destination the cluster was started with (`--snapshots-to`) and trims each partition's log up to
 * the LSN its snapshot covers. Records below the trim point are gone from the log: a node that
 * needs that state again restores it from the snapshot.
 */

/** One partition's result: its snapshot, the LSN the snapshot covers, and its log's trim point after. */
export interface PartitionSnapshot {
  partition: number;
  snapshotId: string;
  log: number;
  lsn: number;
  trimPoint: number;
}

/** What Restate 1.7 answers for a partition when its node has no snapshot destination. */
const NOT_CONFIGURED = /Snapshot repository is not configured/;
/** restatectl 1.7's line for a snapshot made: `Snapshot created for partition 0: snap_… (log 0 @ LSN >= 2)`. */
const CREATED = /^Snapshot created for partition (\d+): (snap_\w+) \(log (\d+) @ LSN >= (\d+)\)$/;
/** How long a log's trim may take to show. */
const TRIM_WAIT_MS = 15_000;
/**
 * What restatectl 1.7 says, once for each node it asked, of a partition no node runs a processor
 * for yet, as a cluster just started does for a while: first `Can not find a suitable node to take
 * snapshot of partition 2`, then `SnapshotCreationFailed("Partition not found for partition 2")`.
 */
const NOT_RUNNING_YET =
  /(?:Partition not found for partition|Can not find a suitable node to take snapshot of partition) (\d+)\b/;
/** How long a partition's processor may take to start before its snapshot counts as failed. */
const PROCESSOR_WAIT_MS = 30_000;

/** The node-to-node addresses of the Restate node(s) a local cluster keeps in its data directory (local-cluster.ts). */
export function nodeAddresses(dataDir: string): string[] {
  const single = join(dataDir, 'restate-ports.json');
  const replicated = join(dataDir, 'restate-cluster', 'ports.json');
  const ports = existsSync(replicated)
    ? (JSON.parse(readFileSync(replicated, 'utf8')) as { nodes: { node: number }[] }).nodes.map((node) => node.node)
    : existsSync(single)
      ? [(JSON.parse(readFileSync(single, 'utf8')) as { node: number }).node]
      : [];
  return ports.map((port) => `http://127.0.0.1:${port}/`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** restatectl 1.7 against `addresses` (node-to-node), confirming any prompt; its human output. */
export function restatectl(
  addresses: string[],
  args: string[],
): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(ensureRestateBinary('restatectl'), ['-s', addresses.join(','), ...args, '--yes'], {
    encoding: 'utf8',
    timeout: 60_000,
    // Its human output: the lines parsed below.
    env: { ...process.env, NO_COLOR: '1' },
  });
  if (result.error) throw new Error(`restatectl ${args.join(' ')}: ${result.error.message}`);
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * How far a log is trimmed: the trim point `restatectl logs describe --extra` shows, or, when its
 * chain now starts later (a node restarted on trimmed data drops the segments below the trim, and
 * then shows 0), the LSN before its first segment: no record at or below it is left.
 */
function trimmedTo(addresses: string[], log: number): number {
  const described = restatectl(addresses, ['logs', 'describe', '--extra', '--all', String(log)]).stdout;
  const shown = Number(/Trim Point LSN: (\d+)/.exec(described)?.[1] ?? 0);
  const starts = [...described.matchAll(/^\W*\d+\s+(\d+)\s+(?:replicated|local|memory)\s/gm)].map((row) =>
    Number(row[1]),
  );
  return Math.max(shown, starts.length > 0 ? Math.min(...starts) - 1 : 0);
}

/**
 * Trims `log` up to `lsn`, the LSN its partition's snapshot covers, and waits until Restate shows it,
 * asking again meanwhile: on a 3-node local cluster, `restatectl snapshots create --trim-log` left
 * half the logs untrimmed, and the same trim asked for again a little later took (docs/how-to/production.md,
 * "Snapshots and log trimming").
 */
async function trim(addresses: string[], log: number, lsn: number): Promise<number> {
  const deadline = Date.now() + TRIM_WAIT_MS;
  for (;;) {
    const trimmed = trimmedTo(addresses, log);
    if (trimmed >= lsn || Date.now() > deadline) return trimmed;
    const submitted = restatectl(addresses, ['logs', 'trim', '--trim-point', String(lsn), String(log)]);
    if (submitted.status !== 0) throw new Error(`restatectl logs trim ${log}: ${submitted.stderr.trim()}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/**
 * `restatectl snapshots create` for every partition. A partition whose processor no node runs yet
 * (a cluster just started: every node answered, not every partition has a leader) is asked again
 * on its own each second for up to PROCESSOR_WAIT_MS; the lines of every attempt are joined, those
 * of the partitions that then succeeded left out.
 */
async function snapshotEvery(addresses: string[]): Promise<ReturnType<typeof restatectl>> {
  let result = restatectl(addresses, ['snapshots', 'create']);
  const deadline = Date.now() + PROCESSOR_WAIT_MS;
  for (;;) {
    const waiting = [
      ...new Set(
        result.stderr
          .split('\n')
          .map((line) => NOT_RUNNING_YET.exec(line)?.[1])
          .filter((partition) => partition !== undefined),
      ),
    ];
    if (waiting.length === 0 || Date.now() >= deadline) return result;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const again = restatectl(addresses, ['snapshots', 'create', ...waiting]);
    // A partition's header line and its nodes' lines all name it; the new attempt says what became of it.
    const named = new RegExp(`\\bpartition (?:${waiting.join('|')})\\b`);
    result = {
      status: again.status !== 0 ? again.status : result.status,
      stdout: `${result.stdout}${again.stdout}`,
      stderr: `${result.stderr
        .split('\n')
        .filter((line) => !named.test(line))
        .join('\n')}\n${again.stderr}`.trim(),
    };
  }
}

/**
 * Snapshots every partition of the cluster running on `dataDir` and trims each log to its snapshot.
 * Prints one line per partition; resolves to false, having said why in one line, when no cluster
 * runs there, none of its nodes has a snapshot destination, or a partition's snapshot failed.
 */
export async function snapshotAndTrim(dataDir: string, print: (line: string) => void): Promise<boolean> {
  const pidFile = join(dataDir, PID_FILE);
  const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : NaN;
  const addresses = nodeAddresses(dataDir);
  if (!Number.isInteger(pid) || !alive(pid) || addresses.length === 0) {
    print(`no cluster is running on ${dataDir} (start one with npm run cluster)`);
    return false;
  }
  // Every partition; each log is trimmed below once its snapshot is in the store.
  const created = await snapshotEvery(addresses);
  if (NOT_CONFIGURED.test(created.stderr)) {
    print(
      `no snapshot destination is configured for the cluster on ${dataDir}: start it with ` +
        `--snapshots-to s3://bucket/prefix (docs/how-to/production.md, "Snapshots and log trimming")`,
    );
    return false;
  }
  const snapshots = created.stdout
    .split('\n')
    .map((line) => CREATED.exec(line.trim()))
    .filter((match) => match !== null)
    .map((match) => ({
      partition: Number(match[1]),
      snapshotId: match[2]!,
      log: Number(match[3]),
      lsn: Number(match[4]),
    }));
  const failures = created.stderr.split('\n').filter((line) => /ERROR|error:/.test(line));
  if (created.status !== 0 || failures.length > 0 || snapshots.length === 0) {
    print(
      `restatectl snapshots create failed (exit ${created.status}): ${failures.join(' | ') || created.stderr.trim() || 'no snapshot made'}`,
    );
    return false;
  }
  const results: PartitionSnapshot[] = [];
  for (const snapshot of snapshots) {
    const trimPoint = await trim(addresses, snapshot.log, snapshot.lsn);
    results.push({ ...snapshot, trimPoint });
    print(
      `partition ${snapshot.partition}: snapshot ${snapshot.snapshotId} at LSN ${snapshot.lsn}; log ${snapshot.log} trimmed to LSN ${trimPoint}`,
    );
  }
  const untrimmed = results.filter((result) => result.trimPoint < result.lsn);
  if (untrimmed.length > 0) {
    print(
      `not trimmed to their snapshot within ${TRIM_WAIT_MS / 1000} s: partition ${untrimmed.map((result) => result.partition).join(', ')}`,
    );
    return false;
  }
  return true;
}
