import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * The LiveKit server this project is tested with. Built from the Go module proxy: no release
 * binary can be downloaded on the project's machines. v1.13.2 to v1.13.5 install this way
 * (v1.13.0 and v1.13.1 carry a `replace` directive, which `go install` refuses).
 */
export const LIVEKIT_SERVER_VERSION = 'v1.13.5';
const MODULE = 'github.com/livekit/livekit-server/cmd/server';

/** Where the binary goes: LIVEKIT_SERVER_BIN_DIR, else a cache outside the package tree shared by every checkout. */
export function liveKitBinDir(): string {
  return process.env.LIVEKIT_SERVER_BIN_DIR ?? join(homedir(), '.cache', 'kyc-livekit', 'bin');
}

/** The installed binary (named `server`, after its package), if it is there and of our version. */
function installed(bin: string): boolean {
  if (!existsSync(bin)) return false;
  const version = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  return version.status === 0 && version.stdout.includes(LIVEKIT_SERVER_VERSION.slice(1));
}

/**
 * The server binary, built with `go install` the first time (a few minutes on two cores; Go 1.26
 * or newer). If the machine's Go is older than the module asks for, set GOTOOLCHAIN (for example
 * `GOTOOLCHAIN=go1.27.3`) and the go command fetches that toolchain through the module proxy.
 */
export function ensureLiveKitServer(log: (line: string) => void = () => {}): string {
  const dir = liveKitBinDir();
  const bin = join(dir, 'server');
  if (installed(bin)) return bin;
  mkdirSync(dir, { recursive: true });
  log(`building ${MODULE}@${LIVEKIT_SERVER_VERSION} into ${dir} (go install, a few minutes, once)`);
  const result = spawnSync('go', ['install', `${MODULE}@${LIVEKIT_SERVER_VERSION}`], {
    env: { ...process.env, GOBIN: dir, CGO_ENABLED: '0' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (result.error) throw new Error(`could not run go (is Go 1.26+ on PATH?): ${result.error.message}`);
  if (result.status !== 0 || !installed(bin))
    throw new Error(`go install ${MODULE}@${LIVEKIT_SERVER_VERSION} into ${dir} failed (exit ${result.status})`);
  return bin;
}
