/** Baseline: POST /v1/events on node:http, parsing the JSON body and answering, nothing else. */
import { createServer } from 'node:http';

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    if (req.method !== 'POST' || req.url !== '/v1/events') {
      res.writeHead(404).end();
      return;
    }
    JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const body = JSON.stringify({ status: 'ok', ingested_at: Math.floor(Date.now() / 1000) });
    res
      .writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) })
      .end(body);
  });
});
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
