import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    // Two cores on CI: more workers only adds contention.
    maxWorkers: 2,
    testTimeout: 15_000,
  },
});
