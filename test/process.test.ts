import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';

/** The real entry point in a child process: what `npm start` runs, minus the build step. */
function startService(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines = createInterface({ input: child.stdout });
  const url = new Promise<string>((resolve, reject) => {
    lines.on('line', (line) => {
      const match = /listening on (http:\/\/[^"]+)/.exec(line);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`exited early with ${code}`)));
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return { child, url, stderr: () => stderr };
}

describe('the process', () => {
  it('serves, then on SIGTERM finishes in-flight work and exits 0', async () => {
    const service = startService({});
    const url = await service.url;
    const ingest = await fetch(`${url}/v1/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ session_id: 's1', event: 'identity' }) });
    expect(ingest.status).toBe(200);
    const exited = once(service.child, 'exit');
    service.child.kill('SIGTERM');
    const [code] = await exited;
    expect(code).toBe(0);
  });

  it('refuses to start on bad configuration, naming the variable', async () => {
    const service = startService({ MAX_SESSIONS: 'lots' });
    await expect(service.url).rejects.toThrow('exited early with 1');
    expect(service.stderr()).toMatch(/^invalid configuration: MAX_SESSIONS/);
  });

  it('refuses to start on a bad KYC_KB_FILE, naming it', async () => {
    const service = startService({ KYC_KB_FILE: '/nonexistent/kyc-kb.json' });
    await expect(service.url).rejects.toThrow('exited early with 1');
    expect(service.stderr()).toMatch(/^invalid configuration: KYC_KB_FILE \/nonexistent\/kyc-kb\.json: cannot read the file \(ENOENT\)/);
  });
});
