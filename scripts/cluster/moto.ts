import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ExitedBeforeAnswering, waitUntilAnswering } from '../wait-until-answering.js';
import { freePort } from './redis-server.js';

/**
 * moto's S3 server (PyPI): a local object store for Restate's partition snapshots. Restate 1.7
 * writes snapshots to S3 only, not to a local directory (docs/how-to/production.md, "Snapshots and
 * log trimming"), so the cluster tests point it at this.
 */
export const MOTO_VERSION = '5.2.5';

/** The virtual environment: MOTO_VENV, else a cache outside the package tree shared by every checkout. */
export function motoVenv(): string {
  return process.env.MOTO_VENV ?? join(homedir(), '.cache', 'kyc-moto', 'venv');
}

function installed(venv: string): boolean {
  if (!existsSync(join(venv, 'bin', 'moto_server'))) return false;
  const version = spawnSync(join(venv, 'bin', 'python'), ['-c', 'import moto; print(moto.__version__)'], {
    encoding: 'utf8',
  });
  return version.status === 0 && version.stdout.trim() === MOTO_VERSION;
}

/**
 * The `moto_server` command, installed from PyPI into its own venv the first time (`python3 -m
 * venv`, then pip), as scripts/fuzz/schemathesis-install.ts installs Schemathesis. Nothing is
 * installed into the repository.
 */
export function ensureMoto(log: (line: string) => void = () => {}): string {
  const venv = motoVenv();
  const bin = join(venv, 'bin', 'moto_server');
  if (installed(venv)) return bin;
  mkdirSync(venv, { recursive: true });
  log(`installing moto[server]==${MOTO_VERSION} into ${venv} (python3 -m venv, pip; once)`);
  const run = (command: string, args: string[]): void => {
    const result = spawnSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'] });
    if (result.error) throw new Error(`could not run ${command}: ${result.error.message}`);
    if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (exit ${result.status})`);
  };
  run('python3', ['-m', 'venv', venv]);
  run(join(venv, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', `moto[server]==${MOTO_VERSION}`]);
  if (!installed(venv)) throw new Error(`moto ${MOTO_VERSION} is not in ${venv} after pip install`);
  return bin;
}

export interface MotoServer {
  /** Its S3 endpoint, e.g. http://127.0.0.1:40123: AWS_ENDPOINT_URL for Restate. */
  url: string;
  pid: number;
  /** Creates a bucket (an S3 PUT on /<bucket>): Restate writes into one that exists. */
  createBucket(bucket: string): Promise<void>;
  /** The keys under `prefix` in `bucket` (S3's ListObjectsV2; the first 1,000). */
  keys(bucket: string, prefix: string): Promise<string[]>;
  stop(): Promise<void>;
}

/** Starts moto's S3 server on 127.0.0.1 and a free port; its objects live in its memory only. */
export async function startMoto(): Promise<MotoServer> {
  const bin = ensureMoto();
  // A port found free may be taken before moto binds it: try again on another, at most three times.
  for (let attempt = 1; ; attempt += 1) {
    const port = await freePort();
    const child = spawn(bin, ['-H', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const url = `http://127.0.0.1:${port}`;
    try {
      await waitUntilAnswering(child, `${url}/`, 'moto_server', 30_000);
    } catch (error) {
      if (error instanceof ExitedBeforeAnswering && attempt < 3) continue;
      throw error;
    }
    return {
      url,
      pid: child.pid!,
      async createBucket(bucket) {
        const response = await fetch(`${url}/${bucket}`, { method: 'PUT' });
        if (!response.ok) throw new Error(`creating bucket ${bucket}: ${response.status} ${await response.text()}`);
      },
      async keys(bucket, prefix) {
        const response = await fetch(`${url}/${bucket}?list-type=2&prefix=${encodeURIComponent(prefix)}`);
        if (!response.ok) throw new Error(`listing ${bucket}: ${response.status} ${await response.text()}`);
        return [...(await response.text()).matchAll(/<Key>([^<]*)<\/Key>/g)].map((match) => match[1]!);
      },
      async stop() {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        await exited;
      },
    };
  }
}
