/** Baseline: the same route on a bare express 5 app with express.json(), nothing else. */
import express from 'express';

const app = express();
app.use(express.json());
app.post('/v1/events', (_req, res) => {
  res.json({ status: 'ok', ingested_at: Math.floor(Date.now() / 1000) });
});
const server = app.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(`listening on http://127.0.0.1:${port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
