import { defineConfig } from 'vitest/config';

/**
 * The voice loop on a real LiveKit server (built by scripts/media/install-livekit.ts), the real
 * voice agent and stand-ins of the model providers: `npm run test:media`, never part of `npm test`.
 */
export default defineConfig({
  test: {
    include: ['test-media/**/*.test.ts'],
    environment: 'node',
    // Media servers, agents and simulated users are heavy on two cores: one file at a time.
    maxWorkers: 1,
    globalSetup: ['test/support/run-temp-dir.ts', 'test/support/service-build.ts'],
    testTimeout: 90_000,
    hookTimeout: 120_000,
  },
});
