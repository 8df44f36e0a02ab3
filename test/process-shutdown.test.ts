import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo, Socket } from 'node:net';
import { connect, createServer } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { tempDataDir } from './support/harness.js';
import { startService } from './support/service-process.js';
import { SseTestClient } from './support/sse-client.js';

// Runs on one store: what is tested is the process's connections at a signal and its start-up checks
// (the busy-port case names its store itself); vitest.config.ts.

/**
 * Shutdown against the real process. The grace period is long (30 s) and the bound on a prompt exit
 * far below it (10 s), so a loaded machine cannot make these pass or fail by timing: a shutdown that
 * waits out the grace period takes 30 s or more.
 */
const GRACE = { SHUTDOWN_GRACE_SECONDS: '30' };
const PROMPT_MS = 10_000;
const patient = { timeout: 15_000, interval: 50 };

async function stopAndTime(child: ReturnType<typeof startService>['child']): Promise<{ code: unknown; ms: number }> {
  const exited = once(child, 'exit');
  const signalled = performance.now();
  child.kill('SIGTERM');
  const [code] = await exited;
  return { code, ms: performance.now() - signalled };
}

function rawSocket(url: string): { socket: Socket; text: () => string; closed: Promise<unknown> } {
  const { port, hostname } = new URL(url);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => undefined);
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  return { socket, text: () => received, closed: once(socket, 'close') };
}

const post = (url: string, body: unknown) =>
  fetch(`${url}/v1/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('shutdown of the process', { timeout: 60_000 }, () => {
  it('(a) after a resumed stream was read briefly and dropped, and another opened: exits at once', async () => {
    const service = startService(GRACE);
    const url = await service.url;
    for (let i = 0; i < 20; i += 1)
      expect((await post(url, { session_id: `s${i}`, event: 'identity' })).status).toBe(200);
    const resumed = await SseTestClient.open(`${url}/api/activity/stream`, { 'Last-Event-ID': '7' });
    await resumed.until((s) => s.items.length > 0);
    resumed.close();
    const second = await SseTestClient.open(`${url}/api/activity/stream`);
    await second.until((s) => s.retry !== undefined);
    const { code, ms } = await stopAndTime(service.child);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(PROMPT_MS);
    expect(await second.finished).toBe('end');
  });

  it('exits at once when the reader of its stdout is gone (`npm start | filter`, then Ctrl-C)', async () => {
    const service = startService(GRACE);
    const url = await service.url;
    expect((await post(url, { session_id: 's1', event: 'identity' })).status).toBe(200);
    // The reading end closes: the service's next log line meets EPIPE.
    service.child.stdout.destroy();
    const { code, ms } = await stopAndTime(service.child);
    expect(service.stderr()).toBe('');
    expect(code).toBe(0);
    expect(ms).toBeLessThan(PROMPT_MS);
  });

  it('(b) cuts a half-sent request at once', async () => {
    const service = startService(GRACE);
    const url = await service.url;
    const half = rawSocket(url);
    half.socket.write(
      'POST /v1/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{"session_id":',
    );
    await vi.waitFor(() => expect(half.socket.readyState).toBe('open'), patient);
    const { code, ms } = await stopAndTime(service.child);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(PROMPT_MS);
    await half.closed;
  });

  it('(c) closes keep-alive connections idle at the signal and those that go idle after it', async () => {
    const service = startService(GRACE);
    const url = await service.url;
    // Idle at the signal: one request answered, the connection kept open.
    const idle = rawSocket(url);
    idle.socket.write('GET /api/features HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await vi.waitFor(() => expect(idle.text()).toMatch(/^HTTP\/1\.1 200 /), patient);
    expect(idle.text()).toMatch(/connection: keep-alive/i);
    // Busy at the signal, idle after it: an open stream that shutdown ends.
    const streaming = rawSocket(url);
    streaming.socket.write('GET /api/activity/stream HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n');
    await vi.waitFor(() => expect(streaming.text()).toMatch(/retry:/), patient);
    const { code, ms } = await stopAndTime(service.child);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(PROMPT_MS);
    await Promise.all([idle.closed, streaming.closed]);
    // The stream ended cleanly (the terminating chunk) before its connection closed.
    expect(streaming.text()).toMatch(/0\r\n\r\n$/);
  });

  it('(d) gives a WebSocket client a second to answer its close frame (1001), then cuts it: one that reads nothing does not hold the exit', async () => {
    const service = startService(GRACE);
    const url = await service.url;
    const { port, hostname } = new URL(url);
    const socket = connect(Number(port), hostname);
    socket.on('error', () => undefined);
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    const closed = once(socket, 'close');
    socket.write(
      'GET /v1/events/ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
    );
    await vi.waitFor(() => expect(Buffer.concat(received).toString('latin1')).toMatch(/^HTTP\/1\.1 101 /), patient);
    // Upgraded, then silent: it never answers the close frame the shutdown sends.
    const { code, ms } = await stopAndTime(service.child);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(PROMPT_MS);
    await closed;
    // The close frame came first: opcode 8, then the code 1001 (0x03e9).
    const bytes = Buffer.concat(received);
    const frame = bytes.subarray(bytes.indexOf('\r\n\r\n') + 4);
    expect([frame[0], frame[2], frame[3]]).toEqual([0x88, 0x03, 0xe9]);
  });
});

describe('start-up safety', { timeout: 60_000 }, () => {
  it('on a busy port exits 1 with one line naming the port and the variables, no stack trace, having taken nothing', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    const dataDir = join(tempDataDir(), 'not-yet');
    try {
      const service = startService({ PORT: String(port), STORE: 'sqlite', DATA_DIR: dataDir });
      await expect(service.url).rejects.toThrow('exited early with 1');
      expect(service.stderr()).toBe(
        `invalid configuration: PORT/HOST: cannot listen on 127.0.0.1:${port} (EADDRINUSE)\n`,
      );
      // The port is taken before anything else: no store was opened, no data directory made.
      expect(service.logs()).not.toMatch(/store open/);
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      taken.close();
    }
  });

  it('warns beyond loopback with no API_KEY, and when V8 may grow the heap past MEMORY_BUDGET_MB (naming the flag); neither once addressed', async () => {
    const exposed = startService({ HOST: '0.0.0.0', MEMORY_BUDGET_MB: '64' });
    // An API key (or loopback), and V8's limit under the budget.
    const addressed = startService({
      HOST: '0.0.0.0',
      API_KEY: 'k1',
      MEMORY_BUDGET_MB: '2048',
      NODE_OPTIONS: '--max-old-space-size=1536',
    });
    await Promise.all([exposed.url, addressed.url]);
    await Promise.all([exposed, addressed].map((service) => stopAndTime(service.child)));
    expect(exposed.logs()).toMatch(/"host":"0\.0\.0\.0".*listening beyond loopback with no API_KEY/);
    expect(exposed.logs()).toMatch(/"memory_budget_mb":64.*start node with --max-old-space-size=48 \(npm start does\)/);
    expect(addressed.logs()).not.toMatch(/beyond loopback|max-old-space-size/);
  });
});
