import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { tempDataDir } from './support/harness.js';

/**
 * `npm start` runs its script under `sh -c` and signals that shell. Unless the shell becomes the
 * service (`exec`), a SIGTERM from a process manager or a container's stop ends the shell and
 * leaves the service running, holding its port and its DATA_DIR.
 */
describe('the npm start script', () => {
  it('hands SIGTERM to the service: the shell npm signals is the service itself', async () => {
    const { scripts } = JSON.parse(readFileSync('package.json', 'utf8')) as {
      scripts: { start: string; serve: string };
    };
    const script = scripts.start;
    expect(script).toContain('dist/src/main.js');
    // `npm run serve` is the same command without the build before it (docs/how-to/production.md, Service processes).
    expect(scripts.serve).toBe(script);
    // The same command line, with an entry that reports the signal in place of the built service.
    const entry = join(tempDataDir(), 'entry.mjs');
    // The handler is in place before 'ready' is printed: a SIGTERM sent on 'ready' must find it.
    writeFileSync(
      entry,
      "process.on('SIGTERM', () => { console.log('SIGTERM'); process.exit(0); }); setInterval(() => {}, 1000); console.log('ready');",
    );
    const child = spawn('sh', ['-c', script.replace('dist/src/main.js', entry)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    await vi.waitFor(() => expect(out).toContain('ready'), { timeout: 10_000, interval: 20 });
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code] = await exited;
    await vi.waitFor(() => expect(out).toContain('SIGTERM'), { timeout: 5_000, interval: 20 });
    expect(code).toBe(0);
  });
});
