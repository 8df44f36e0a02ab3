import type { ServerProcess } from './processes.js';

/**
 * MEMORY_BUDGET_MB of a service the bench fills with up to 100,000 sessions. At the default
 * (1,024) STORE=memory holds about 82,000 bench sessions, each counted at 8 KiB plus its data, and
 * then evicts the least recently touched to let new ones in: the load's own sessions, created
 * first, went first, and every measured event made a session anew. So a row named for 100,000
 * sessions measured eviction. With this budget they all fit.
 */
export const HELD_MEMORY_BUDGET_MB = '4096';

/** Throws unless the service holds (running or hibernated) at least `sessions` sessions. */
export async function expectHeld(
  server: ServerProcess,
  sessions: number,
): Promise<{ running: number; hibernated: number }> {
  const status = (await (await fetch(`${server.url}/api/status`)).json()) as {
    sessions: { running: number; hibernated: number };
  };
  const held = status.sessions.running + status.sessions.hibernated;
  if (held < sessions) throw new Error(`the service holds ${held} sessions of the ${sessions} the bench gave it`);
  return status.sessions;
}
