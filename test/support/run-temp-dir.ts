import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Vitest global setup: one temporary directory for the whole run, and TMPDIR pointed at it, so
 * whatever a test or a process it starts puts in `os.tmpdir()` (the harness's SQLite files, config
 * files, a Restate server's data) is removed when the run ends. A worker's own exit handlers do not
 * run when vitest ends its workers, and each run of npm test used to leave about 400 MB behind.
 */
export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'kyc-test-run-'));
  process.env.TMPDIR = root;
  return () => rmSync(root, { recursive: true, force: true });
}
