import type { ChildProcess } from 'node:child_process';
import { fork, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import type { LoadJob, LoadResult } from '../load-worker.js';
import { CPU_SETS, moveToLoadCores, onServerCores } from './cpu-sets.js';
import { runWrk, wrkAvailable, wrkCanRun } from './wrk.js';

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  stop(): Promise<void>;
}

/** A free loopback port: bound and released, so the server under test can take it. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/**
 * Starts a server in its own process on a free port and waits until it answers. Its output is
 * discarded, as a log shipper would drain it: the cost of writing the logs is still paid. It runs on
 * the servers' cores when the bench pins (bench/lib/cpu-sets.ts). Given
 * `onStdout`, each line of its standard output goes there instead (a V8 trace, say).
 */
export async function startServer(
  command: string[],
  env: Record<string, string> = {},
  readyPath = '/health',
  onStdout?: (line: string) => void,
): Promise<ServerProcess> {
  const port = await freePort();
  const pinned = onServerCores(command);
  const child = spawn(pinned[0]!, pinned.slice(1), {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ...env },
    stdio: ['ignore', onStdout ? 'pipe' : 'ignore', 'pipe'],
  });
  if (onStdout) createInterface({ input: child.stdout! }).on('line', onStdout);
  // Errors reach the bench's output; the inspector's banner (scale suite) does not.
  createInterface({ input: child.stderr! }).on('line', (line) => {
    if (!/^(Debugger (listening on|attached|ending)|For help, see)/.test(line)) process.stderr.write(`${line}\n`);
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${command.join(' ')} exited with ${child.exitCode} before answering`);
    try {
      await fetch(url + readyPath);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`${command.join(' ')} did not answer within 30 s`);
      await sleep(50);
    }
  }
  return {
    child,
    url,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Resident set size of a process in bytes, from /proc (Linux). */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) * 1024 : Number.NaN;
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
export function cpuSeconds(pid: number): number {
  return statCpuSeconds(`/proc/${pid}/stat`);
}

/** User + system CPU seconds in a `stat` file of /proc: a process's, or one of its threads'. */
function statCpuSeconds(statFile: string): number {
  const fields = readFileSync(statFile, 'utf8').split(') ')[1]!.split(' ');
  const ticksPerSecond = 100;
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
}

/** CPU seconds each thread of a process has used so far, added up by thread name (`/proc/<pid>/task/<tid>/comm`; Linux). */
export function threadCpuSeconds(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      byName.set(name, (byName.get(name) ?? 0) + statCpuSeconds(`/proc/${pid}/task/${tid}/stat`));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return byName;
}

/** Read and write system calls a process has made so far (`syscr` + `syscw` in /proc/<pid>/io, Linux): socket reads and writes included. */
export function ioSyscalls(pid: number): number {
  const io = readFileSync(`/proc/${pid}/io`, 'utf8');
  const count = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(io)?.[1] ?? 0);
  return count('syscr') + count('syscw');
}

let loadWorker:
  | {
      child: ChildProcess;
      nextId: number;
      waiting: Map<number, { resolve: (r: LoadResult) => void; reject: (e: Error) => void }>;
    }
  | undefined;

function worker(): NonNullable<typeof loadWorker> {
  if (loadWorker) return loadWorker;
  const child = fork('bench/load-worker.ts', [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  moveToLoadCores(child.pid!);
  const state = {
    child,
    nextId: 0,
    waiting: new Map<number, { resolve: (r: LoadResult) => void; reject: (e: Error) => void }>(),
  };
  child.on('message', (message: { id: number; result?: LoadResult; error?: string }) => {
    const pending = state.waiting.get(message.id);
    state.waiting.delete(message.id);
    if (message.result) pending?.resolve(message.result);
    else pending?.reject(new Error(`load worker: ${message.error ?? 'no result'}`));
  });
  child.once('exit', (code) => {
    for (const pending of state.waiting.values()) pending.reject(new Error(`load worker exited (${code})`));
    loadWorker = undefined;
  });
  // The bench ends when its work does, not when the idle worker would.
  child.unref();
  child.channel?.unref();
  loadWorker = state;
  return state;
}

/** The generator a pinned run's ingestion load goes through (bench/lib/wrk.ts says why). */
export const PINNED_GENERATOR = CPU_SETS && wrkAvailable() ? 'wrk' : 'autocannon';

/**
 * Runs one load job: with wrk when the run is pinned and wrk can express the job, otherwise with
 * autocannon in the load worker, a separate process. `autocannon` always takes autocannon: for a
 * suite whose ratios compare targets wrk cannot all express, so that one generator measures them all.
 */
export function runLoad(job: LoadJob, generator: 'fastest' | 'autocannon' = 'fastest'): Promise<LoadResult> {
  if (generator === 'fastest' && CPU_SETS && PINNED_GENERATOR === 'wrk' && wrkCanRun(job))
    return runWrk(job, CPU_SETS.load, CPU_SETS.loadCores);
  const state = worker();
  const id = state.nextId++;
  // While a job runs, the worker's channel keeps the bench alive.
  state.child.channel?.ref();
  return new Promise<LoadResult>((resolve, reject) => {
    state.waiting.set(id, { resolve, reject });
    state.child.send({ id, job });
  }).finally(() => {
    if (state.waiting.size === 0) state.child.channel?.unref();
  });
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
