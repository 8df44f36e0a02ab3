import type { AddressInfo } from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { RestateHttp, RestateTimeoutError, RestateUnreachableError } from '../../src/cluster/restate-http.js';

const servers: Server[] = [];
const clients: RestateHttp[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** The client's end of the connection it came on. */
  fromPort: number;
}

/** A stand-in for the Restate ingress that records what it was asked. */
async function ingress(
  answer: (req: IncomingMessage, body: string, res: ServerResponse) => void,
): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body, fromPort: req.socket.remotePort! });
      answer(req, body, res);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/restate/`, seen };
}

const client = (url: string) => {
  const made = new RestateHttp(url);
  clients.push(made);
  return made;
};

describe('RestateHttp: one Restate address over kept connections', () => {
  it('sends the path under the base URL with its body as JSON, and gives back the status, the body and the invocation id', async () => {
    const server = await ingress((_req, _body, res) =>
      res.writeHead(202, { 'x-restate-id': 'inv_1' }).end('{"status":"Accepted"}'),
    );
    const answer = await client(server.url).request('KycSession/s-1/ingest/send', {
      method: 'POST',
      body: '{"command":1}',
      headers: { 'idempotency-key': 'k' },
      timeoutMs: 2000,
    });
    expect(answer).toEqual({ status: 202, text: '{"status":"Accepted"}', invocationId: 'inv_1' });
    expect(server.seen).toMatchObject([
      {
        method: 'POST',
        url: '/restate/KycSession/s-1/ingest/send',
        body: '{"command":1}',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'k' },
      },
    ]);
  });

  it('answers an error status as it came, without an invocation id when none is named, and keeps its connections for later requests', async () => {
    const server = await ingress((req, _body, res) =>
      req.url!.endsWith('/view') ? res.writeHead(503).end('redis down') : res.writeHead(200).end('null'),
    );
    const restate = client(server.url);
    expect(await restate.request('KycSession/s-1/view', { method: 'POST', timeoutMs: 2000 })).toEqual({
      status: 503,
      text: 'redis down',
      invocationId: null,
    });
    expect(server.seen[0]!.headers['content-type']).toBeUndefined();
    for (let n = 0; n < 5; n += 1)
      expect(await restate.request('health', { method: 'GET', timeoutMs: 2000 })).toEqual({
        status: 200,
        text: 'null',
        invocationId: null,
      });
    // Six requests one after another, over connections opened once and kept, not one each.
    expect(new Set(server.seen.map((request) => request.fromPort)).size).toBeLessThanOrEqual(2);
  });

  it('an answer not come within the wait is a RestateTimeoutError', async () => {
    const server = await ingress(() => undefined);
    await expect(
      client(server.url).request('KycSession/s-1/ask', { method: 'POST', body: '{}', timeoutMs: 200 }),
    ).rejects.toBeInstanceOf(RestateTimeoutError);
  });

  it('nothing listening is a RestateUnreachableError naming the request', async () => {
    const server = await ingress(() => undefined);
    await new Promise((resolve) => servers.pop()!.close(resolve));
    const refused = client(server.url).request('KycSession/s-1/ingest/send', {
      method: 'POST',
      body: '{}',
      timeoutMs: 2000,
    });
    await expect(refused).rejects.toBeInstanceOf(RestateUnreachableError);
    await expect(refused).rejects.toThrow(/POST \/restate\/KycSession\/s-1\/ingest\/send/);
    // No connection was made: nothing was sent, so nothing can have been taken.
    await expect(refused).rejects.toMatchObject({ maybeTaken: false });
  });

  it('a connection cut after the request arrived is a RestateUnreachableError that may have been taken', async () => {
    const server = await ingress((req) => req.socket.destroy());
    const cut = client(server.url).request('KycSession/s-1/ingest/send', {
      method: 'POST',
      body: '{}',
      timeoutMs: 2000,
    });
    await expect(cut).rejects.toBeInstanceOf(RestateUnreachableError);
    await expect(cut).rejects.toMatchObject({ maybeTaken: true });
    expect(server.seen).toHaveLength(1);
  });
});
