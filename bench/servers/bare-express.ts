/**
 * Baseline: the service's routes on a bare express 5 app with express.json(), doing no work of
 * their own. The context route answers a captured service response (CONTEXT_BODY_FILE) so both
 * sides send the same bytes; the difference is what the service's actors and logic cost.
 */
import { readFileSync } from 'node:fs';
import express from 'express';

// Read on the first request, once: the bench captures the body while this server starts.
let contextBody: string | undefined;
const capturedContext = () =>
  (contextBody ??= process.env.CONTEXT_BODY_FILE ? readFileSync(process.env.CONTEXT_BODY_FILE, 'utf8') : '{}');
const decision = { trigger: false, reason: 'none', action: 'none', intervention_mode: 'none' };

const app = express();
app.use(express.json());
app.post('/v1/events', (_req, res) => {
  res.json({ status: 'ok', ingested_at: Math.floor(Date.now() / 1000) });
});
app.post('/v1/assistant/trigger/evaluate', (_req, res) => {
  res.json(decision);
});
app.get('/v1/assistant/context/:session_id', (_req, res) => {
  res.type('application/json').send(capturedContext());
});
const server = app.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
