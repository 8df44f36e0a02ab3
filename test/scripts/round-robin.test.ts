import { connect, createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { Proxy } from '../../scripts/cluster/round-robin.js';
import { httpRoundRobin, tcpRoundRobin } from '../../scripts/cluster/round-robin.js';

const opened: (Proxy | Server)[] = [];
afterEach(async () => {
  for (const item of opened.splice(0))
    await ('port' in item ? item.close() : new Promise((resolve) => item.close(resolve)));
});

const listening = async (server: Server): Promise<number> => {
  opened.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};

/** A TCP backend that answers every connection with its own name, then closes it. */
const namedBackend = (name: string) => listening(createServer((socket) => socket.end(name)));

/** What one connection through the proxy reads before it closes. */
const readThrough = (port: number) =>
  new Promise<string>((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
  });

describe('the local cluster proxies', () => {
  it('a connection to the endpoints proxy before any endpoint has started is closed, and the proxy keeps serving once one has', async () => {
    const backends: number[] = [];
    const proxy = await tcpRoundRobin(backends);
    opened.push(proxy);
    expect(await readThrough(proxy.port)).toBe('');
    backends.push(await namedBackend('a'));
    expect(await readThrough(proxy.port)).toBe('a');
  });

  it('new connections go to each endpoint in turn, and a refusing one is passed over', async () => {
    // Port 1 on loopback: nothing listens there, so it refuses. A port freed by closing a server
    // could be taken by another test file's server in the same run (files run in parallel).
    const refusing = 1;
    const proxy = await tcpRoundRobin([await namedBackend('a'), refusing, await namedBackend('b')]);
    opened.push(proxy);
    const seen = [];
    for (let n = 0; n < 4; n += 1) seen.push(await readThrough(proxy.port));
    expect(seen).toEqual(['a', 'b', 'a', 'b']);
  });

  it('tells clients its own keep-alive timeout, not the service process’s', async () => {
    // A backend that keeps idle connections 65 s, as the service does (src/http/server.ts).
    const backend = createHttpServer((_req, res) => res.end('{}'));
    backend.keepAliveTimeout = 65_000;
    const proxy = await httpRoundRobin([await listening(backend)]);
    opened.push(proxy);
    const direct = await fetch(`http://127.0.0.1:${(backend.address() as AddressInfo).port}/`);
    expect(direct.headers.get('keep-alive')).toBe('timeout=65');
    await direct.arrayBuffer();
    const response = await fetch(`http://127.0.0.1:${proxy.port}/`);
    await response.arrayBuffer();
    // Node's default for the proxy's own server: a client closes an idle connection before the proxy does.
    expect(response.headers.get('keep-alive')).toBe('timeout=5');
  });

  it('a request to the front before any service process has started is answered 503 with a reason', async () => {
    const proxy = await httpRoundRobin([]);
    opened.push(proxy);
    const response = await fetch(`http://127.0.0.1:${proxy.port}/health/ready`);
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(await response.json()).toEqual({ detail: 'no service process has started yet' });
  });

  it('a request is given an Idempotency-Key unless it has one, and keeps the one it has', async () => {
    const keys: (string | undefined)[] = [];
    const backend = await listening(
      createHttpServer((req, res) => {
        keys.push(req.headers['idempotency-key'] as string | undefined);
        res.end('ok');
      }),
    );
    const proxy = await httpRoundRobin([backend]);
    opened.push(proxy);
    await (await fetch(`http://127.0.0.1:${proxy.port}/v1/events`, { method: 'POST', body: '{}' })).text();
    await (
      await fetch(`http://127.0.0.1:${proxy.port}/v1/events`, {
        method: 'POST',
        body: '{}',
        headers: { 'idempotency-key': 'mine' },
      })
    ).text();
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe('mine');
  });
});
