import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

const suite = { include: ['test/**/*.test.ts'], environment: 'node' as const };

/** Every test file under `dir`, with its source. */
function testFiles(dir = 'test'): { path: string; source: string }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return path.endsWith('.test.ts') ? [{ path, source: readFileSync(path, 'utf8') }] : [];
  });
}

const files = testFiles();
/** Test files that run the service (the harness or a child process): the ones a store can change. */
const serviceTests = files
  .filter(({ source }) => /support\/(harness|service-process)\.js/.test(source))
  .map(({ path }) => path);
/**
 * Of those, a file that says `// Runs on one store:` and why (its tests are about something other
 * than the store: the HTTP server, a script, the process, the machine's paths) runs once, on
 * SQLite, the store `npm start` uses.
 */
const oneStoreTests = files.filter(({ source }) => /^\/\/ Runs on one store: /m.test(source)).map(({ path }) => path);

export default defineConfig({
  test: {
    // Two cores on CI: a third worker keeps both busy while a test waits on a child process or a
    // timeout; a fourth only adds contention (whole suite, quiet 2-core machine: 2 workers 123 s,
    // 3 workers 101-105 s, 4 workers 119 s).
    maxWorkers: 3,
    // One temporary directory per run, in memory where the machine allows, removed at its end
    // (test/support/run-temp-dir-in-memory.ts), and the service compiled once for the processes
    // tests start (test/support/service-build.ts).
    globalSetup: ['test/support/run-temp-dir-in-memory.ts', 'test/support/service-build.ts'],
    testTimeout: 15_000,
    // Each test builds its own harness (app, actor system, store), so files can share a worker: this
    // saves re-importing the service per file, about a third of the suite's time on two cores.
    isolate: false,
    // Every test that runs the service runs against each store (the harness picks it from
    // TEST_STORE); pure unit tests run once. test/durability names its store (SQLite), and so does
    // a file that runs on one store (above).
    projects: [
      {
        test: {
          ...suite,
          name: 'memory',
          env: { TEST_STORE: 'memory' },
          exclude: ['test/durability/**', ...oneStoreTests],
        },
      },
      { test: { ...suite, include: serviceTests, name: 'sqlite', env: { TEST_STORE: 'sqlite' } } },
    ],
  },
});
