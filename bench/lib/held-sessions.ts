import type { ServerProcess } from './processes.js';

/**
 * MEMORY_BUDGET_MB of a service the bench fills with up to 100,000 sessions. STORE=memory counts
 * every session it holds at 8 KiB plus its data, against a fifth of the budget
 * (docs/decisions/0044-sessions-take-a-fifth-of-the-budget.md), and past it evicts the least
 * recently touched to let new ones in: the load's own sessions, created first, went first, and
 * every measured event made a session anew. So a row named for 100,000 sessions measured
 * eviction. With this budget they all fit (its fifth is 1,638 MiB).
 */
export const HELD_MEMORY_BUDGET_MB = '8192';

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
