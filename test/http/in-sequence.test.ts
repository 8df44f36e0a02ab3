import express from 'express';
import type { RequestHandler } from 'express';
import supertest from 'supertest';
import { describe, expect, it } from 'vitest';
import { inSequence } from '../../src/http/middleware/in-sequence.js';

const mark =
  (name: string): RequestHandler =>
  (_req, res, next) => {
    res.append('X-Seen', name);
    next();
  };

function appWith(handler: RequestHandler) {
  const app = express();
  app.use(handler);
  app.get('/', (_req, res) => res.json({ ok: true }));
  app.use(((error, _req, res, _next) =>
    res.status(500).json({ detail: (error as Error).message })) as express.ErrorRequestHandler);
  return app;
}

describe('inSequence', () => {
  it('runs the handlers in order, then the routes', async () => {
    const res = await supertest(appWith(inSequence(mark('a'), mark('b'), mark('c')))).get('/');
    expect(res.status).toBe(200);
    expect(res.headers['x-seen']).toBe('a, b, c');
  });

  it('stops at a handler that answers, and passes errors, thrown or given, to the error handler', async () => {
    const answers: RequestHandler = (_req, res) => void res.status(503).json({ detail: 'busy' });
    const passes: RequestHandler = (_req, _res, next) => next(new Error('given'));
    const throws: RequestHandler = () => {
      throw new Error('thrown');
    };
    const answered = await supertest(appWith(inSequence(mark('a'), answers, mark('c')))).get('/');
    expect([answered.status, answered.headers['x-seen'], answered.body]).toEqual([503, 'a', { detail: 'busy' }]);
    expect((await supertest(appWith(inSequence(passes, mark('b')))).get('/')).body).toEqual({ detail: 'given' });
    const thrown = await supertest(appWith(inSequence(mark('a'), throws, mark('c')))).get('/');
    expect([thrown.status, thrown.headers['x-seen'], thrown.body]).toEqual([500, 'a', { detail: 'thrown' }]);
  });
});
