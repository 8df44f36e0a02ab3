import { once } from 'node:events';
import type { Server, Socket as ServerSocket } from 'node:net';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CopyTurn } from '../../src/http/replay-window.js';
import { ReplayWindow } from '../../src/http/replay-window.js';
import type { StoredAnswer } from '../../src/http/middleware/replays.js';
import { replays } from '../../src/http/middleware/replays.js';
import { rawSocket } from '../support/raw-socket.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A window that says when a copy starts to wait for the first: the moment the test needs, not a sleep. */
class WatchedWindow extends ReplayWindow<StoredAnswer> {
  waiting = 0;
  override afterFirst(
    key: string,
    fingerprint: string,
    pending: Promise<StoredAnswer | undefined>,
  ): Promise<CopyTurn<StoredAnswer>> {
    this.waiting += 1;
    return super.afterFirst(key, fingerprint, pending);
  }
}

const body = '{"session_id":"s1"}';
const request = `POST /start HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nIdempotency-Key: k1\r\nContent-Length: ${body.length}\r\n\r\n${body}`;

describe('replays: a copy whose client left while it waited for a first that was cut', () => {
  it('runs nothing and hands the turn on: a later copy is run and answered, not kept waiting', async () => {
    const window = new WatchedWindow({ windowMs: 60_000, maxBytes: 1 << 20, now: () => 0 });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let runs = 0;
    const app = express();
    app.post('/start', express.json(), replays(window), async (_req, res) => {
      runs += 1;
      if (runs === 1) await held;
      res.json({ run: runs });
    });
    const server: Server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    const accepted: ServerSocket[] = [];
    server.on('connection', (socket) => accepted.push(socket));
    const { port } = server.address() as AddressInfo;

    const first = rawSocket(port, cleanups);
    first.socket.write(request);
    await vi.waitFor(() => expect(runs).toBe(1));
    const copy = rawSocket(port, cleanups);
    copy.socket.write(request);
    await vi.waitFor(() => expect(window.waiting).toBe(1));
    // The copy's client leaves, then the first's: the first's outcome is unknown, its turn passes.
    copy.socket.destroy();
    await vi.waitFor(() => expect(accepted[1]!.destroyed).toBe(true));
    first.socket.destroy();
    await vi.waitFor(() => expect(accepted[0]!.destroyed).toBe(true));
    release();

    const later = await fetch(`http://127.0.0.1:${port}/start`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'k1' },
      body,
      signal: AbortSignal.timeout(5_000),
    });
    expect(later.status).toBe(200);
    // The first ran, the copy whose client left did not, the later copy did.
    expect(await later.json()).toEqual({ run: 2 });
  });
});
