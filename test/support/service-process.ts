import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { onTestFinished } from 'vitest';
import { TEST_STORE, tempDataDir } from './harness.js';
import { SERVICE_BUILD_ENV } from './service-build.js';

/**
 * A source file of src/ or scripts/ (`scripts/simulate.ts`) as the run's build has it, compiled
 * once for every process a test starts (test/support/service-build.ts).
 */
export function built(source: string): string {
  const build = process.env[SERVICE_BUILD_ENV];
  if (build === undefined)
    throw new Error(`${SERVICE_BUILD_ENV} is unset: add test/support/service-build.ts to the suite's globalSetup`);
  return join(build, source.replace(/\.ts$/, '.js'));
}

/** The real entry point in a child process: what `npm start` runs, compiled by the run's build. */
export function startService(env: Record<string, string>) {
  const child = spawn(process.execPath, [built('src/main.ts')], {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      STORE: TEST_STORE,
      DATA_DIR: tempDataDir(),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // A test that fails before it stops its service must not leave it running past the run (vitest's
  // workers end without an 'exit' event). A suite's hook that starts one stops it in its own afterAll.
  try {
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
  } catch {
    // Started by a suite's hook (vitest allows this hook only inside a test): that suite's afterAll stops it.
  }
  const lines = createInterface({ input: child.stdout });
  const url = new Promise<string>((resolve, reject) => {
    lines.on('line', (line) => {
      const match = /listening on (http:\/\/[^"]+)/.exec(line);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`exited early with ${code}`)));
  });
  const inspectUrl = new Promise<string>((resolve) => {
    lines.on('line', (line) => {
      const match = /"inspect_url":"(ws:\/\/[^"]+)"/.exec(line);
      if (match) resolve(match[1]!);
    });
  });
  const logged: string[] = [];
  lines.on('line', (line) => logged.push(line));
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return { child, url, inspectUrl, stderr: () => stderr, logs: () => logged.join('\n') };
}
