import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The Schemathesis release the fuzz run is pinned to (PyPI). */
export const SCHEMATHESIS_VERSION = '4.32.5';

/** The virtual environment: SCHEMATHESIS_VENV, else a cache outside the package tree shared by every checkout. */
export function schemathesisVenv(): string {
  return process.env.SCHEMATHESIS_VENV ?? join(homedir(), '.cache', 'kyc-schemathesis', 'venv');
}

function installed(st: string): boolean {
  if (!existsSync(st)) return false;
  const version = spawnSync(st, ['--version'], { encoding: 'utf8' });
  return version.status === 0 && version.stdout.trim().endsWith(SCHEMATHESIS_VERSION);
}

/**
 * The `st` command of Schemathesis, installed from PyPI into its own venv the first time
 * (`python3 -m venv`, then pip; about a minute). Nothing is installed into the repository.
 */
export function ensureSchemathesis(log: (line: string) => void = () => {}): string {
  const venv = schemathesisVenv();
  const st = join(venv, 'bin', 'st');
  if (installed(st)) return st;
  mkdirSync(venv, { recursive: true });
  log(`installing schemathesis==${SCHEMATHESIS_VERSION} into ${venv} (python3 -m venv, pip; once)`);
  const run = (command: string, args: string[]): void => {
    const result = spawnSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'] });
    if (result.error) throw new Error(`could not run ${command}: ${result.error.message}`);
    if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (exit ${result.status})`);
  };
  run('python3', ['-m', 'venv', venv]);
  run(join(venv, 'bin', 'pip'), [
    'install',
    '--quiet',
    '--disable-pip-version-check',
    `schemathesis==${SCHEMATHESIS_VERSION}`,
  ]);
  if (!installed(st)) throw new Error(`schemathesis ${SCHEMATHESIS_VERSION} is not in ${venv} after pip install`);
  return st;
}
