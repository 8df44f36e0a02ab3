import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVICE_NODE_FLAGS } from './node-flags.js';
import type { ServerProcess } from './processes.js';
import { startServer } from './processes.js';

/**
 * The service as `npm start` runs it (built JS, its V8 flags), with the rate limit off: the bench is
 * one client IP. STORE=memory unless the env names a store; a SQLite store gets a fresh DATA_DIR,
 * removed when the service stops, unless the env names one. `checkout` runs another built copy of
 * the service on this bench's Node and cores: BENCH_CHECKOUT for every suite's service, or
 * BENCH_AGAINST beside this one in the ingestion suite (bench/suites/ingestion.ts).
 */
export async function startService(
  env: Record<string, string> = {},
  nodeOptions: string[] = [],
  onStdout?: (line: string) => void,
  checkout = process.env.BENCH_CHECKOUT ?? '.',
): Promise<ServerProcess> {
  const ownDataDir =
    env.STORE === 'sqlite' && env.DATA_DIR === undefined ? mkdtempSync(join(tmpdir(), 'kyc-bench-')) : undefined;
  const server = await startServer(
    [process.execPath, ...SERVICE_NODE_FLAGS, ...nodeOptions, join(checkout, 'dist/src/main.js')],
    {
      RATE_LIMIT_PER_MINUTE: '0',
      STORE: 'memory',
      ...env,
      ...(ownDataDir ? { DATA_DIR: ownDataDir } : {}),
    },
    '/health',
    onStdout,
  );
  if (!ownDataDir) return server;
  return {
    ...server,
    stop: async () => {
      await server.stop();
      rmSync(ownDataDir, { recursive: true, force: true });
    },
  };
}

// The baselines run built too (npm run build compiles bench/servers): under tsx every closure a
// request creates would pay esbuild's name-keeping helper, which the built service does not.
export const startBareExpress = (
  env: Record<string, string> = {},
  nodeOptions: string[] = [],
): Promise<ServerProcess> => startServer([process.execPath, ...nodeOptions, 'dist/bench/servers/bare-express.js'], env);

export const startBareNode = (): Promise<ServerProcess> =>
  startServer([process.execPath, 'dist/bench/servers/bare-node.js']);

/** The service's HTTP layer with the session step skipped (bench/servers/service-http-layer.ts). */
export const startServiceHttpLayer = (env: Record<string, string> = {}): Promise<ServerProcess> =>
  startServer([process.execPath, ...SERVICE_NODE_FLAGS, 'dist/bench/servers/service-http-layer.js'], {
    RATE_LIMIT_PER_MINUTE: '0',
    STORE: 'memory',
    LOG_LEVEL: 'warn',
    ...env,
  });

/** Bare express keeping each event as one SQLite row, group-committed (bench/servers/bare-express-sqlite.ts). */
export const startBareExpressSqlite = (): Promise<ServerProcess> =>
  startServer([process.execPath, 'dist/bench/servers/bare-express-sqlite.js']);
