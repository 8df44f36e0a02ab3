import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { startService } from './support/service-process.js';
import { SseTestClient } from './support/sse-client.js';

// Real child processes: start-up under load takes seconds, so these get more than the default timeout.
describe('the process', { timeout: 60_000 }, () => {
  it('serves, then on SIGTERM finishes in-flight work and exits 0', async () => {
    const service = startService({});
    const url = await service.url;
    const ingest = await fetch(`${url}/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ session_id: 's1', event: 'identity' }),
    });
    expect(ingest.status).toBe(200);
    const exited = once(service.child, 'exit');
    service.child.kill('SIGTERM');
    const [code] = await exited;
    expect(code).toBe(0);
  });

  it('on SIGTERM ends open activity streams cleanly and still exits 0 promptly', async () => {
    const service = startService({ SHUTDOWN_GRACE_SECONDS: '10' });
    const url = await service.url;
    const streams = await Promise.all([
      SseTestClient.open(`${url}/api/activity/stream`),
      SseTestClient.open(`${url}/api/activity/stream?kind=event`),
    ]);
    await Promise.all(streams.map((stream) => stream.until((s) => s.retry !== undefined)));
    const exited = once(service.child, 'exit');
    const signalled = performance.now();
    service.child.kill('SIGTERM');
    expect(await Promise.all(streams.map((stream) => stream.finished))).toEqual(['end', 'end']);
    const [code] = await exited;
    expect(code).toBe(0);
    expect(performance.now() - signalled).toBeLessThan(3000);
  });
});
