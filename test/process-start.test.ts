import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { InspectionReceiver } from './support/inspection-receiver.js';
import { sdkConfigFile } from './support/sdk-config-file.js';
import { startService } from './support/service-process.js';

// Runs on one store: what start-up checks and the INSPECT relay do comes before any store; vitest.config.ts.

// Real child processes: start-up under load takes seconds, so these get more than the default timeout.
describe('the process at start-up: its configuration and the INSPECT relay', { timeout: 60_000 }, () => {
  it('refuses to start on bad configuration, naming the variable', async () => {
    const service = startService({ MAX_SESSIONS: 'lots' });
    await expect(service.url).rejects.toThrow('exited early with 1');
    expect(service.stderr()).toMatch(/^invalid configuration: MAX_SESSIONS/);
  });

  it('with INSPECT set, starts the relay, sends session machines to it, and still exits 0 on SIGTERM', async () => {
    const service = startService({ INSPECT: '127.0.0.1:0' });
    const [url, relayUrl] = await Promise.all([service.url, service.inspectUrl]);
    expect(relayUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    const receiver = new InspectionReceiver(relayUrl);
    await vi.waitFor(
      async () => {
        // Until the receiver's socket is open, each new session is a chance for it to see one.
        await fetch(`${url}/v1/events`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ session_id: 'watched', event: 'identity' }),
        });
        expect(receiver.actor('watched')).toBeDefined();
      },
      { timeout: 5000, interval: 100 },
    );
    const exited = once(service.child, 'exit');
    service.child.kill('SIGTERM');
    const [code] = await exited;
    expect(code).toBe(0);
  });

  it('refuses to start when the INSPECT relay cannot listen, naming the variable and the address', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const service = startService({ INSPECT: `127.0.0.1:${port}` });
      await expect(service.url).rejects.toThrow('exited early with 1');
      expect(service.stderr()).toBe(
        `invalid configuration: INSPECT: cannot listen on 127.0.0.1:${port} (EADDRINUSE)\n`,
      );
    } finally {
      taken.close();
    }
  });

  it('refuses to start on a bad KYC_KB_FILE, naming it', async () => {
    const service = startService({ KYC_KB_FILE: '/nonexistent/kyc-kb.json' });
    await expect(service.url).rejects.toThrow('exited early with 1');
    expect(service.stderr()).toMatch(
      /^invalid configuration: KYC_KB_FILE \/nonexistent\/kyc-kb\.json: cannot read the file \(ENOENT\)/,
    );
  });

  it('refuses to start on a bad SDK_CONFIG_FILE, naming the file and the problem', async () => {
    const file = sdkConfigFile({ kycis_demo: { thresholds: { min_trigger_interval_seconds: 'soon' } } });
    const service = startService({ SDK_CONFIG_FILE: file.path });
    await expect(service.url).rejects.toThrow('exited early with 1');
    expect(service.stderr()).toBe(
      `invalid SDK_CONFIG_FILE ${file.path}: "kycis_demo".thresholds.min_trigger_interval_seconds: must be a number\n`,
    );
  });
});
