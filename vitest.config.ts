import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

const suite = { include: ['test/**/*.test.ts'], environment: 'node' as const };

/** Test files that run the service (the harness or a child process): the ones a store can change. */
function serviceTests(dir = 'test'): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return serviceTests(path);
    return path.endsWith('.test.ts') && /support\/(harness|service-process)\.js/.test(readFileSync(path, 'utf8')) ? [path] : [];
  });
}

export default defineConfig({
  test: {
    // Two cores on CI: more workers only adds contention.
    maxWorkers: 2,
    // One temporary directory per run, removed at its end (test/support/run-temp-dir.ts).
    globalSetup: ['test/support/run-temp-dir.ts'],
    testTimeout: 15_000,
    // Each test builds its own harness (app, actor system, store), so files can share a worker: this
    // saves re-importing the service per file, about a third of the suite's time on two cores.
    isolate: false,
    // Every test that runs the service runs against each store (the harness picks it from
    // TEST_STORE); pure unit tests run once. test/durability names its store (SQLite).
    projects: [
      { test: { ...suite, name: 'memory', env: { TEST_STORE: 'memory' }, exclude: ['test/durability/**'] } },
      { test: { ...suite, include: serviceTests(), name: 'sqlite', env: { TEST_STORE: 'sqlite' } } },
    ],
  },
});
