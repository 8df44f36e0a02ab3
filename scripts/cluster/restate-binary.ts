import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The Restate release this project is tested with: the server and its command-line tool alike. */
export const RESTATE_VERSION = '1.7.12';

/** A Restate binary published on npm: the server (about 216 MB) or restatectl (about 23 MB). */
export type RestateBinary = 'restate-server' | 'restatectl';

/** Where `binary` is installed on demand: a cache outside the package tree, shared by every checkout. */
export function restateCacheDir(binary: RestateBinary = 'restate-server'): string {
  const base = process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache');
  return join(base, 'kyc-voice-assistant', `${binary}-${RESTATE_VERSION}`);
}

/**
 * The binary, installed from the npm registry into its cache the first time. The platform
 * package's binary itself, not npm's launcher, so a PID is the binary's own. Never a dependency:
 * the server's platform package alone is about 216 MB.
 */
export function ensureRestateBinary(binary: RestateBinary, log: (line: string) => void = () => {}): string {
  const dir = restateCacheDir(binary);
  const platformBin = join(
    dir,
    'node_modules',
    '@restatedev',
    `${binary}-${process.platform}-${process.arch}`,
    'bin',
    binary,
  );
  const bin = existsSync(platformBin) ? platformBin : join(dir, 'node_modules', '.bin', binary);
  if (existsSync(bin)) return bin;
  mkdirSync(dir, { recursive: true });
  const spec = `@restatedev/${binary}@${RESTATE_VERSION}`;
  log(`installing ${spec} into ${dir} (once)`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(
    npm,
    ['install', '--prefix', dir, '--no-save', '--no-audit', '--no-fund', '--loglevel=error', spec],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  if (result.status !== 0) throw new Error(`could not install ${spec} into ${dir}`);
  for (const installed of [platformBin, bin]) if (existsSync(installed)) return installed;
  throw new Error(`${spec} installed into ${dir} has no binary for ${process.platform}-${process.arch}`);
}
