import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

/** The Restate server this project is tested with. Its platform package is about 216 MB: never a dependency. */
export const RESTATE_SERVER_VERSION = '1.7.12';

/** Where the server is installed on demand: a cache outside the package tree, shared by every checkout. */
export function restateCacheDir(): string {
  const base = process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache');
  return join(base, 'kyc-voice-assistant', `restate-server-${RESTATE_SERVER_VERSION}`);
}

/**
 * The server binary, installed from the npm registry the first time (about 216 MB, a minute or
 * two). The platform package's binary itself, not npm's launcher, so its PID is the server's.
 */
export function ensureRestateServer(log: (line: string) => void = () => {}): string {
  const dir = restateCacheDir();
  const platformBin = join(dir, 'node_modules', '@restatedev', `restate-server-${process.platform}-${process.arch}`, 'bin', 'restate-server');
  const bin = existsSync(platformBin) ? platformBin : join(dir, 'node_modules', '.bin', 'restate-server');
  if (existsSync(bin)) return bin;
  mkdirSync(dir, { recursive: true });
  log(`installing @restatedev/restate-server@${RESTATE_SERVER_VERSION} into ${dir} (about 216 MB, once)`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['install', '--prefix', dir, '--no-save', '--no-audit', '--no-fund', '--loglevel=error', `@restatedev/restate-server@${RESTATE_SERVER_VERSION}`], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (result.status !== 0) throw new Error(`could not install @restatedev/restate-server@${RESTATE_SERVER_VERSION} into ${dir}`);
  for (const installed of [platformBin, bin]) if (existsSync(installed)) return installed;
  throw new Error(`@restatedev/restate-server@${RESTATE_SERVER_VERSION} installed into ${dir} has no binary for ${process.platform}-${process.arch}`);
}

export interface RestatePorts {
  ingress: number;
  admin: number;
  /** Node-to-node (message fabric). */
  node: number;
}

export interface RestateServer {
  ingressUrl: string;
  adminUrl: string;
  pid: number;
  /** Registers (or re-registers) the service endpoint at `uri`. */
  register(uri: string): Promise<void>;
  /** Restate's SQL over its own tables (admin API `POST /query`). */
  query<Row>(sql: string): Promise<Row[]>;
  stop(): Promise<void>;
}

/**
 * One Restate server with every port on 127.0.0.1 and its data in `dataDir` (by default a fresh
 * temp dir, removed when the server stops). Telemetry and release checks are off: nothing leaves
 * the machine.
 */
export async function startRestateServer(ports: RestatePorts, options: { dataDir?: string; logFile?: string; signingKeyFile?: string } = {}): Promise<RestateServer> {
  const bin = ensureRestateServer((line) => process.stderr.write(`${line}\n`));
  // A data directory made here is this server's alone: it goes when the server stops.
  const ownDataDir = options.dataDir === undefined ? mkdtempSync(join(tmpdir(), 'restate-')) : undefined;
  const dataDir = options.dataDir ?? ownDataDir!;
  const out = options.logFile ? openSync(options.logFile, 'a') : 'ignore';
  const child = spawn(
    bin,
    ['--no-logo', '--listen-mode', 'tcp', '--base-dir', dataDir, '--bind-address', `127.0.0.1:${ports.node}`, '--advertised-address', `http://127.0.0.1:${ports.node}`],
    {
      env: {
        ...process.env,
        RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ports.ingress}`,
        RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${ports.admin}`,
        // Every call to an endpoint carries a JWT signed with this key; endpoints refuse any other.
        ...(options.signingKeyFile ? { RESTATE_WORKER__INVOKER__REQUEST_IDENTITY_PRIVATE_KEY_PEM_FILE: options.signingKeyFile } : {}),
        RESTATE_DISABLE_TELEMETRY: 'true',
        DO_NOT_TRACK: '1',
      },
      stdio: ['ignore', out, out],
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ingressUrl = `http://127.0.0.1:${ports.ingress}/`;
  const adminUrl = `http://127.0.0.1:${ports.admin}/`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`restate-server exited with ${child.exitCode}`);
    const ready = await fetch(`${adminUrl}health`)
      .then((response) => response.ok)
      .catch(() => false);
    if (ready) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error('restate-server did not become ready within 60 s');
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    ingressUrl,
    adminUrl,
    pid: child.pid!,
    async register(uri) {
      for (let attempt = 0; ; attempt += 1) {
        const response = await fetch(`${adminUrl}deployments`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ uri, force: true }),
        });
        if (response.ok) return;
        // Just after start the server may not yet accept registrations.
        if (attempt >= 50) throw new Error(`registering ${uri}: ${response.status} ${await response.text()}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    },
    async query<Row>(sql: string) {
      const response = await fetch(`${adminUrl}query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query: sql }),
      });
      if (!response.ok) throw new Error(`query: ${response.status} ${await response.text()}`);
      return ((await response.json()) as { rows: Row[] }).rows;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
      if (ownDataDir) rmSync(ownDataDir, { recursive: true, force: true });
    },
  };
}
