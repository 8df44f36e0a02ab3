import type { LoadResult } from '../load-worker.js';
import type { ServerProcess } from './processes.js';
import { cpuSeconds, runLoad } from './processes.js';

export interface InterleavedTarget {
  name: string;
  start: () => Promise<ServerProcess>;
  /** Run once the server is up, before the warm-up (state the load should find). */
  prepare?: (server: ServerProcess) => Promise<void>;
}

export interface InterleavedOptions {
  rounds: number;
  /** Load before the measured runs, so every target is measured with its code compiled by the JIT. */
  warmupSeconds: number;
  durationSeconds: number;
  connections: number;
  sessions: number;
}

export type MeasuredRun = LoadResult & { cpuMicrosPerRequest: number };

/**
 * POST /v1/events load on each target, round by round. All of them stay up for the whole suite
 * (idle ones cost nothing), each warmed once, and the measured runs go round them so drift on a
 * shared machine hits every target alike. Returns each target's runs by name.
 */
export async function measureInterleaved(
  targets: InterleavedTarget[],
  options: InterleavedOptions,
): Promise<Map<string, MeasuredRun[]>> {
  const results = new Map<string, MeasuredRun[]>(targets.map((target) => [target.name, []]));
  const servers: ServerProcess[] = [];
  try {
    servers.push(...(await Promise.all(targets.map((target) => target.start()))));
    for (const [index, target] of targets.entries()) await target.prepare?.(servers[index]!);
    const jobFor = (server: ServerProcess) => ({
      url: server.url,
      method: 'POST' as const,
      path: '/v1/events',
      connections: options.connections,
      sessions: options.sessions,
      body: 'event' as const,
    });
    for (const server of servers) await runLoad({ ...jobFor(server), durationSeconds: options.warmupSeconds });
    for (let roundIndex = 0; roundIndex < options.rounds; roundIndex += 1) {
      for (const [index, target] of targets.entries()) {
        const server = servers[index]!;
        const cpuBefore = cpuSeconds(server.child.pid!);
        const result = await runLoad({ ...jobFor(server), durationSeconds: options.durationSeconds });
        results.get(target.name)!.push({
          ...result,
          cpuMicrosPerRequest: ((cpuSeconds(server.child.pid!) - cpuBefore) / result.requests) * 1e6,
        });
      }
    }
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
  return results;
}
