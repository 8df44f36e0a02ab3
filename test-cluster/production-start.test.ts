import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { freePort } from '../scripts/cluster/redis-server.js';
import { tempDataDir } from '../test/support/harness.js';

/**
 * The production image as docs/how-to/production.md (Service processes) builds it: the built code and the
 * dependencies pruned of dev tools, run by `npm run serve`. Built here from a copy: this tree's
 * `dist/` (`npm run build` first, as every cluster test needs) and its node_modules, hard-linked so
 * the copy costs no disk, then pruned with npm's own `prune --omit=dev`.
 */
describe('the production start: npm run serve over the built code, no dev dependencies', () => {
  it('serves events, the console and the API reference from a copy pruned of its build and test tools', async () => {
    const image = tempDataDir();
    for (const file of ['package.json', 'package-lock.json']) cpSync(file, join(image, file));
    cpSync('dist', join(image, 'dist'), { recursive: true });
    execFileSync('cp', ['-al', 'node_modules', join(image, 'node_modules')]);
    const npm = join(dirname(process.execPath), 'npm');
    const env = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` };
    execFileSync(existsSync(npm) ? npm : 'npm', ['prune', '--omit=dev', '--no-audit', '--no-fund', '--offline'], {
      cwd: image,
      env,
      stdio: 'pipe',
    });
    // The build and test tools are gone (a runtime package may still bring one of the others, as
    // @livekit/agents brings typescript): what runs, runs without them.
    const tools = [
      'tsx',
      'vitest',
      'eslint',
      'prettier',
      'playwright-core',
      'supertest',
      'fast-check',
      'openapi-typescript',
      'node',
    ];
    const devDependencies = Object.keys(
      (JSON.parse(readFileSync('package.json', 'utf8')) as { devDependencies: Record<string, string> }).devDependencies,
    );
    expect(tools.filter((tool) => !devDependencies.includes(tool))).toEqual([]);
    expect(tools.filter((tool) => existsSync(join(image, 'node_modules', tool)))).toEqual([]);

    const { scripts } = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { serve: string } };
    const port = await freePort();
    const service = spawn('sh', ['-c', scripts.serve], {
      cwd: image,
      env: { ...env, PORT: String(port), DATA_DIR: join(image, 'data'), LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    service.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    service.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const base = `http://127.0.0.1:${port}`;
    try {
      await vi.waitFor(
        async () => {
          expect(service.exitCode, out).toBeNull();
          expect((await fetch(`${base}/health/ready`)).status).toBe(200);
        },
        { timeout: 60_000, interval: 250 },
      );
      const event = await fetch(`${base}/v1/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ session_id: 'prod-1', user_id: 'u-prod', event: 'screen_view', screen: 'pan_details' }),
      });
      expect(event.status).toBe(200);
      expect(((await (await fetch(`${base}/api/sessions/prod-1`)).json()) as { screen: string }).screen).toBe(
        'pan_details',
      );
      // The console's own files and the packages it serves come from the image, not from the sources.
      const console = await fetch(`${base}/console`);
      expect(console.status).toBe(200);
      expect(await console.text()).toContain('<html');
      expect((await fetch(`${base}/docs`)).status).toBe(200);
      // Held to the budget's heap share, as `npm start` holds it.
      expect(readFileSync(`/proc/${service.pid}/cmdline`, 'utf8').split('\0')).toContain('--max-old-space-size=768');
      const exited = once(service, 'exit');
      service.kill('SIGTERM');
      const [code] = await exited;
      expect(code, out).toBe(0);
    } finally {
      if (service.exitCode === null && service.signalCode === null) service.kill('SIGKILL');
    }
  }, 180_000);
});
