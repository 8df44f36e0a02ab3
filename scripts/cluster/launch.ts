/**
 * How a server process is started: its command as given, or wrapped in another that execs it (the
 * bench runs servers under `taskset` on the cores it keeps for them: bench/lib/cpu-sets.ts). The
 * wrapper must exec, so the PID is still the server's.
 */
export type Launch = (command: string[]) => string[];

export const asGiven: Launch = (command) => command;

/** Spawn's two arguments from a launched command. */
export function launched(launch: Launch, command: string[]): [string, string[]] {
  const [file, ...args] = launch(command);
  return [file!, args];
}
