import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { ExitedBeforeAnswering, waitUntilAnswering } from '../../scripts/wait-until-answering.js';
import { freePort } from '../../scripts/cluster/redis-server.js';

const children: ReturnType<typeof spawn>[] = [];

/** A Node child running `code`, as a server binary would be started. */
function run(code: string) {
  const child = spawn(process.execPath, ['-e', code], { stdio: 'ignore' });
  children.push(child);
  return child;
}

afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

describe('waitUntilAnswering', () => {
  it('returns once the server answers 2xx, after answers that were not', async () => {
    const port = await freePort();
    // 503 for the first half second (still starting), then 200.
    const child = run(
      `const started = Date.now(); require('node:http').createServer((q, s) => { s.statusCode = Date.now() - started < 500 ? 503 : 200; s.end(); }).listen(${port}, '127.0.0.1')`,
    );
    const before = Date.now();
    await waitUntilAnswering(child, `http://127.0.0.1:${port}/`, 'test server', 10_000);
    expect(Date.now() - before).toBeGreaterThanOrEqual(400);
    expect(child.exitCode).toBeNull();
  });

  it('fails at once, naming the server, when the process exits first', async () => {
    const port = await freePort();
    const child = run('process.exit(3)');
    await expect(waitUntilAnswering(child, `http://127.0.0.1:${port}/`, 'test server', 10_000)).rejects.toThrow(
      new ExitedBeforeAnswering('test server exited with 3'),
    );
  });

  it('kills a server that never answers and fails when the time is up', async () => {
    const port = await freePort();
    const child = run('setInterval(() => {}, 1000)');
    const exited = new Promise((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    await expect(waitUntilAnswering(child, `http://127.0.0.1:${port}/`, 'test server', 300)).rejects.toThrow(
      /test server did not answer .* within 0.3 s/,
    );
    expect(await exited).toBe('SIGKILL');
  });
});
