import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What the agent sees of the service, with faults put in by the test: every request is passed
 * through to the service unchanged, except the context fetches while `failContext` is on, which
 * are answered 503 as an overloaded or restarting service would. The refused ones are counted
 * with the time they came, per session.
 */
export async function startServiceProxy() {
  let target = '';
  let failing = false;
  const refused = new Map<string, number[]>();
  const server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const path = new URL(req.url ?? '/', 'http://proxy').pathname;
      const context = /^\/v1\/assistant\/context\/([^/]+)$/.exec(path);
      if (failing && req.method === 'GET' && context) {
        const sessionId = decodeURIComponent(context[1]!);
        refused.set(sessionId, [...(refused.get(sessionId) ?? []), performance.now()]);
        res
          .writeHead(503, { 'content-type': 'application/json' })
          .end(JSON.stringify({ detail: 'service unavailable' }));
        return;
      }
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers))
        if (typeof value === 'string' && name !== 'host' && name !== 'connection') headers.set(name, value);
      try {
        const answer = await fetch(`${target}${req.url}`, {
          method: req.method,
          headers,
          ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
        });
        res.writeHead(
          answer.status,
          Object.fromEntries(
            [...answer.headers].filter(
              ([name]) => name !== 'content-encoding' && name !== 'content-length' && name !== 'transfer-encoding',
            ),
          ),
        );
        res.end(Buffer.from(await answer.arrayBuffer()));
      } catch (error) {
        res.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: String(error) }));
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    /** Where requests go on to; returns the proxy's own URL, for the agent. */
    forwardTo(serviceUrl: string) {
      target = serviceUrl;
      return url;
    },
    failContext(on: boolean) {
      failing = on;
    },
    /** When each refused context fetch of the session came (performance.now() ms). */
    refusedAt: (sessionId: string) => refused.get(sessionId) ?? [],
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
