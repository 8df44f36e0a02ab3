import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * One temporary directory for the whole run, under `parent`, and TMPDIR pointed at it, so whatever
 * a test or a process it starts puts in `os.tmpdir()` (the harness's SQLite files, config files, a
 * Restate server's data) is removed when the run ends. A worker's own exit handlers do not run when
 * vitest ends its workers, and each run of npm test used to leave about 400 MB behind.
 */
export function runTempDir(parent: string): () => void {
  const root = mkdtempSync(join(parent, 'kyc-test-run-'));
  process.env.TMPDIR = root;
  return () => rmSync(root, { recursive: true, force: true });
}

/** Vitest global setup: the run's directory under the machine's temporary directory. */
export default function setup(): () => void {
  return runTempDir(tmpdir());
}
