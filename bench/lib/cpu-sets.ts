import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

/**
 * Which cores the servers under test run on and which the load generator runs on. When the two
 * share cores, the generator takes most from the fastest server, so every ratio to a baseline drifts
 * toward 1 and flatters the service (BENCHMARKS.md: "Pinned"). Pinned, each server
 * process (all its threads: `taskset` at spawn, so V8's and libuv's threads inherit the set) runs on
 * `server` and the generator on `load`.
 */
export interface CpuSets {
  server: string;
  load: string;
  /** How many cores each server has: the targets depend on it (BENCHMARKS.md: "Pinned"). */
  serverCores: number;
  /** How many the generator has: wrk runs one thread per core. */
  loadCores: number;
}

/** With this many cores or more, each server gets 2 and the generator 8, as the reference machine was measured. */
const WIDE_MACHINE_CORES = 10;

function countCores(set: string): number {
  return set.split(',').reduce((total, part) => {
    const [from, to] = part.split('-').map(Number);
    return total + (to === undefined ? 1 : to - from! + 1);
  }, 0);
}

function tasksetAvailable(): boolean {
  try {
    execFileSync('taskset', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * The plan for this run: `BENCH_SERVER_CPUS` and `BENCH_LOAD_CPUS` (taskset lists such as `0` or
 * `2-9`) when both are set, otherwise derived from the core count; none with `--unpinned`, on one
 * core, or where `taskset` is missing (then the bench says its ratios are unpinned).
 */
export function planCpuSets(
  argv: readonly string[] = process.argv,
  env: NodeJS.ProcessEnv = process.env,
  cores = availableParallelism(),
  hasTaskset = tasksetAvailable,
): CpuSets | undefined {
  if (argv.includes('--unpinned') || cores < 2 || !hasTaskset()) return undefined;
  const server = env.BENCH_SERVER_CPUS;
  const load = env.BENCH_LOAD_CPUS;
  if (server && load) return { server, load, serverCores: countCores(server), loadCores: countCores(load) };
  if (cores >= WIDE_MACHINE_CORES) return { server: '0-1', load: '2-9', serverCores: 2, loadCores: 8 };
  return { server: '0', load: cores === 2 ? '1' : `1-${cores - 1}`, serverCores: 1, loadCores: cores - 1 };
}

/** The bench's plan, decided once per run. */
export const CPU_SETS: CpuSets | undefined = planCpuSets();

/** `command` run on the servers' cores: taskset replaces itself with it, so the PID is the server's. */
export function onServerCores(command: string[]): string[] {
  return CPU_SETS ? ['taskset', '-c', CPU_SETS.server, ...command] : command;
}

/** Moves a running process, every thread of it, onto the generator's cores. */
export function moveToLoadCores(pid: number): void {
  if (CPU_SETS) execFileSync('taskset', ['-a', '-p', '-c', CPU_SETS.load, String(pid)], { stdio: 'ignore' });
}

/** One line for the report: where the servers and the generator ran. */
export function describeCpuSets(generator: string): string {
  if (!CPU_SETS)
    return 'Unpinned: the servers and the load generator share every core, so the ratios are flattered (BENCHMARKS.md: "Pinned").';
  const cores = `${CPU_SETS.serverCores} core${CPU_SETS.serverCores > 1 ? 's' : ''}`;
  return (
    `Pinned: each server on CPU ${CPU_SETS.server} (${cores}), the load generator (${generator}) ` +
    `and this runner on CPU ${CPU_SETS.load}, one server measured at a time.`
  );
}
