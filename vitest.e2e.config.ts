import { defineConfig } from 'vitest/config';

/** Browser tests (`npm run test:e2e`): a real service and Chromium, one file at a time. */
export default defineConfig({
  test: {
    include: ['test/e2e/**/*.e2e.ts'],
    environment: 'node',
    maxWorkers: 1,
    // One temporary directory per run, removed at its end (test/support/run-temp-dir.ts), and the
    // service compiled once for the processes tests start (test/support/service-build.ts).
    globalSetup: ['test/support/run-temp-dir.ts', 'test/support/service-build.ts'],
    testTimeout: 90_000,
    hookTimeout: 90_000,
  },
});
