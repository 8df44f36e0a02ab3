import type { ServerProcess } from './processes.js';
import { startServer } from './processes.js';

/** The service as `npm start` runs it (built JS), with the rate limit off: the bench is one client IP. */
export function startService(env: Record<string, string> = {}, nodeOptions: string[] = []): Promise<ServerProcess> {
  return startServer([process.execPath, ...nodeOptions, 'dist/src/main.js'], { RATE_LIMIT_PER_MINUTE: '0', ...env });
}

export const startBareExpress = (env: Record<string, string> = {}): Promise<ServerProcess> =>
  startServer([process.execPath, '--import', 'tsx', 'bench/servers/bare-express.ts'], env);

export const startBareNode = (): Promise<ServerProcess> => startServer([process.execPath, '--import', 'tsx', 'bench/servers/bare-node.ts']);
