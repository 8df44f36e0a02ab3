import { defineConfig } from 'vitest/config';

/** The tests against real cluster engines (Redis, Restate): `npm run test:cluster`, never part of `npm test`. */
export default defineConfig({
  test: {
    include: ['test-cluster/**/*.test.ts'],
    environment: 'node',
    maxWorkers: 1,
    // One temporary directory per run, removed at its end (test/support/run-temp-dir.ts), and the
    // service compiled once for the processes tests start (test/support/service-build.ts).
    globalSetup: ['test/support/run-temp-dir.ts', 'test/support/service-build.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
