import { defineConfig } from 'vitest/config';

const suite = { include: ['test/**/*.test.ts'], environment: 'node' as const };

export default defineConfig({
  test: {
    // Two cores on CI: more workers only adds contention.
    maxWorkers: 2,
    testTimeout: 15_000,
    // The whole suite runs against each store: the harness picks it from TEST_STORE.
    projects: [
      // test/durability names its store (SQLite): once is enough.
      { test: { ...suite, name: 'memory', env: { TEST_STORE: 'memory' }, exclude: ['test/durability/**'] } },
      { test: { ...suite, name: 'sqlite', env: { TEST_STORE: 'sqlite' } } },
    ],
  },
});
