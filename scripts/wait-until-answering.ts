import type { ChildProcess } from 'node:child_process';

/** The server's process ended before it answered (a port taken since it was found free, a bad configuration). */
export class ExitedBeforeAnswering extends Error {
  override name = 'ExitedBeforeAnswering';
}

/**
 * Waits until a server just spawned answers `url` with a 2xx, polling every 100 ms. Fails at once
 * if the process exits first; past `timeoutMs` the process is killed and the wait fails, so a
 * server that hangs at start never outlives its caller.
 */
export async function waitUntilAnswering(
  child: ChildProcess,
  url: string,
  name: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new ExitedBeforeAnswering(`${name} exited with ${child.exitCode}`);
    const ready = await fetch(url)
      .then((response) => response.ok)
      .catch(() => false);
    if (ready) return;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${name} did not answer ${url} within ${timeoutMs / 1000} s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
