import { defineConfig } from 'vitest/config';

/** The tests against real cluster engines (Redis, Restate): `npm run test:cluster`, never part of `npm test`. */
export default defineConfig({
  test: {
    include: ['test-cluster/**/*.test.ts'],
    environment: 'node',
    maxWorkers: 1,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
