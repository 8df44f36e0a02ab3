import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LocalCluster } from './local-cluster.js';
import { releaseNameOf } from './local-cluster.js';

/**
 * A rolling upgrade of a running `npm run cluster` (docs/how-to/production.md, "Upgrades: one deployment per
 * release"): `npm run cluster -- --upgrade` builds the service (as every `npm run cluster` does) and
 * asks the running script to roll the built code out. That script copies the build into a release
 * directory of its own, starts the new release's processes on it, registers them as a new Restate
 * deployment (new invocations go there; started ones stay on theirs), puts them behind the proxy,
 * and retires every older release once nothing is pinned to its deployment: off the proxy, its
 * deployment removed, its processes stopped. Timers pending in Restate fire on the new release.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Where the running script keeps its pid, in the data directory: what `--upgrade` signals. */
export const PID_FILE = 'cluster.pid';
/** What `--upgrade` asks for (the release's name, when not the code's), written before it signals. */
const REQUEST_FILE = 'upgrade-request.json';
/** The running script's account of each upgrade, line by line; the last line of one says how it ended. */
const LOG_FILE = 'upgrade.log';
const DONE = 'upgrade done';
const FAILED = 'upgrade failed';

/** How long an old release may keep invocations pinned to it before the upgrade gives up waiting. */
const RETIRE_TIMEOUT_MS = 10 * 60_000;

/**
 * In the running script, on SIGUSR2: rolls the code built in this tree out as a new release and
 * retires the ones before it. Each step is written to the upgrade log and to `say`.
 */
export async function rollOut(
  cluster: LocalCluster,
  dataDir: string,
  processes: number,
  say: (line: string) => void,
): Promise<void> {
  const log = (line: string) => {
    appendFileSync(join(dataDir, LOG_FILE), `${line}\n`);
    say(line);
  };
  try {
    const requested = existsSync(join(dataDir, REQUEST_FILE))
      ? (JSON.parse(readFileSync(join(dataDir, REQUEST_FILE), 'utf8')) as { release?: string }).release
      : undefined;
    const built = join(ROOT, 'dist', 'src');
    if (!existsSync(join(built, 'main.js'))) throw new Error('no built service in dist/: run npm run build');
    const name = requested ?? releaseNameOf(built);
    if (cluster.releases.some((release) => release.name === name)) {
      log(`release ${name} is already running: nothing to roll out`);
      log(DONE);
      return;
    }
    // A copy of its own: the next build in this tree must not change the code a running release loads.
    const dir = join(dataDir, 'releases', name);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    cpSync(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
    cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    const olds = [...cluster.releases];
    const next = await cluster.release(name, { processes, main: join(dir, 'dist', 'src', 'main.js') });
    log(
      `release ${name} started: ${next.processes.map((service) => `pid ${service.pid} on :${service.port}`).join(', ')}; ` +
        `Restate deployment ${next.deploymentId} takes new invocations`,
    );
    for (const old of olds) {
      log(`retiring release ${old.name}: off the proxy, waiting until nothing is pinned to ${old.deploymentId}`);
      await cluster.retire(old, RETIRE_TIMEOUT_MS);
      log(
        `release ${old.name} retired: its deployment removed, processes ${old.processes.map((service) => service.pid).join(', ')} stopped`,
      );
    }
    log(DONE);
  } catch (error) {
    log(`${FAILED}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * `npm run cluster -- --upgrade`: signals the cluster running on `dataDir` to roll out what was just
 * built, and prints its account until the upgrade ends. Resolves to whether it succeeded.
 */
export async function requestUpgrade(
  dataDir: string,
  release: string | undefined,
  print: (line: string) => void,
  timeoutMs = RETIRE_TIMEOUT_MS + 120_000,
): Promise<boolean> {
  const pidFile = join(dataDir, PID_FILE);
  const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : NaN;
  if (!Number.isInteger(pid) || !alive(pid))
    throw new Error(`no cluster is running on ${dataDir} (start one with npm run cluster)`);
  const logFile = join(dataDir, LOG_FILE);
  const offset = existsSync(logFile) ? statSync(logFile).size : 0;
  writeFileSync(join(dataDir, REQUEST_FILE), JSON.stringify(release === undefined ? {} : { release }));
  process.kill(pid, 'SIGUSR2');
  return followAccount(logFile, offset, pid, { done: DONE, failed: FAILED, what: 'upgrade' }, print, timeoutMs);
}

/**
 * Prints the running script's account in `logFile` from `offset` on, line by line, until a line
 * is `ends.done` (true) or starts with `ends.failed` (false); throws when the script `pid` stops
 * or the account does not end within `timeoutMs`.
 */
export async function followAccount(
  logFile: string,
  offset: number,
  pid: number,
  ends: { done: string; failed: string; what: string },
  print: (line: string) => void,
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (existsSync(logFile) && statSync(logFile).size > offset) {
      const text = readFileSync(logFile).subarray(offset).toString('utf8');
      const complete = text.slice(0, text.lastIndexOf('\n') + 1);
      offset += Buffer.byteLength(complete);
      for (const line of complete.split('\n').filter((part) => part.length > 0)) {
        print(line);
        if (line === ends.done) return true;
        if (line.startsWith(ends.failed)) return false;
      }
    }
    if (!alive(pid)) throw new Error(`the cluster (pid ${pid}) stopped during the ${ends.what}`);
    if (Date.now() > deadline) throw new Error(`the ${ends.what} did not end within ${Math.round(timeoutMs / 1000)} s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
