import type { Response } from 'express';

/**
 * A 200 JSON answer written in one call, for the routes every SDK event takes. `res.json` does the
 * same through `res.send` (charset and type lookups, ETag and freshness checks, a Buffer copy),
 * which cost several microseconds a request; for a fresh JSON body to a POST none of them applies.
 * Headers already set (X-Request-ID, rate-limit headers) go out with it.
 */
export function sendJson(res: Response, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}
