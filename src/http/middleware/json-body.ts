import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import express from 'express';
import { MAX_BODY_DEPTH, tooDeepPath } from '../body-depth.js';
import { HttpError } from '../http-error.js';
import type { BodyLine, RequestBodies } from '../request-bodies.js';
import { loneSurrogatePath, mayHoldLoneSurrogate } from '../well-formed-body.js';
import { BODY_LIMIT_BYTES, bodyError } from './body-errors.js';
import type { LargeBodyTurns } from '../large-body-turns.js';
import { LARGE_BODY_BYTES } from '../large-body-turns.js';
import { inSequence } from './in-sequence.js';

/**
 * The Content-Type headers the SDKs and curl send, byte for byte. A body with one of these and no
 * Content-Encoding is read on the direct path; any other (a charset to check, parameters, a
 * compressed body) goes through body-parser, which knows every case.
 */
const PLAIN_JSON_TYPES = new Set([
  'application/json',
  'application/json; charset=utf-8',
  'application/json;charset=utf-8',
  'application/json; charset=UTF-8',
]);

/** The charset parameter of a Content-Type, quoted or not. */
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]+)/i;

function isPlainJson(req: IncomingMessage): boolean {
  const type = req.headers['content-type'];
  const encoding = req.headers['content-encoding'];
  return type !== undefined && PLAIN_JSON_TYPES.has(type) && (encoding === undefined || encoding === 'identity');
}

/** Whether the request carries a body at all, as body-parser decides it (type-is's `hasBody`). */
const hasBody = (req: IncomingMessage): boolean =>
  req.headers['transfer-encoding'] !== undefined || req.headers['content-length'] !== undefined;

/** A body that no room could be made for among the bodies arriving (request-bodies.ts): refused, its connection closed. */
function bodiesFull(res: { setHeader(name: string, value: string): unknown }): HttpError {
  res.setHeader('Connection', 'close');
  return new HttpError(503, 'request bodies arriving are at their memory budget (MEMORY_BUDGET_MB); retry', {
    'Retry-After': '1',
  });
}

/**
 * Charges a body read by body-parser to its share as its chunks arrive (request-bodies.ts), and
 * releases it when the stream ends or closes; a large one (LARGE_BODY_BYTES) is released by the
 * caller, once its turn has come, so that what waits for a turn is charged (large-body-turns.ts).
 * Attached in the same turn as body-parser's own reader, so both see every chunk; a body past the
 * share's room has its connection cut. Whether the body was large.
 */
function meterStream(req: IncomingMessage, bodies: RequestBodies, line: BodyLine): () => boolean {
  let received = 0;
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (bodies.arrived(line, received)) return;
    req.off('data', onData);
    req.socket.destroy();
  };
  const large = () => received >= LARGE_BODY_BYTES;
  const done = () => {
    req.off('data', onData);
    if (!large()) bodies.close(line);
  };
  req.on('data', onData);
  req.once('end', done);
  req.once('close', done);
  return large;
}

/**
 * Reads a UTF-8 body of at most `limit` bytes, charged to `line` of the bodies' share as it
 * arrives. The stream is drained past the limit so the connection stays usable, and the callback
 * runs once: with the text, or with the error answered.
 */
function readText(
  req: IncomingMessage,
  limit: number,
  bodies: RequestBodies,
  line: BodyLine,
  turns: LargeBodyTurns,
  full: () => HttpError,
  done: (error: HttpError | undefined, text?: string) => void,
): void {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) {
    bodies.close(line);
    req.resume();
    return done(bodyError('entity.too.large'));
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  /** Ends the reading once: false if it had ended. */
  const settle = (): boolean => {
    if (finished) return false;
    finished = true;
    bodies.close(line);
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onAbort);
    req.off('close', onClose);
    return true;
  };
  const finish = (error: HttpError | undefined, text?: string) => {
    if (settle()) done(error, text);
  };
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size > limit) {
      finish(bodyError('entity.too.large'));
      return void req.resume();
    }
    if (!bodies.arrived(line, size)) {
      finish(full());
      return void req.resume();
    }
    chunks.push(chunk);
  };
  const decode = () => {
    // Cut while it waited (request-bodies.ts cuts the oldest bodies to make room): not worked on.
    if (!line.open) return onAbort();
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
    // Decoded leniently, bytes that are not UTF-8 would become U+FFFD: the body would be changed, not refused.
    if (!isUtf8(body)) return finish(bodyError('body.not.utf8'));
    finish(undefined, body.toString('utf8'));
  };
  // A large body stays charged, and is read, in its own turn (large-body-turns.ts).
  const onEnd = () => (size >= LARGE_BODY_BYTES ? turns.take(decode) : decode());
  // The connection is gone (its client left, or request-bodies.ts cut it): no answer can reach
  // it, so none is built and the request goes no further. An error and an answer built for each of
  // a slow-body flood's cut connections cost more than the cut (docs/reference/limits.md, "What a
  // cut connection costs").
  const onAbort = () => void settle();
  const onClose = () => {
    if (!req.complete) onAbort();
  };
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onAbort);
  req.on('close', onClose);
}

/** A body whose text cannot be kept as sent (well-formed-body.ts): the 422 naming where, or undefined. */
function loneSurrogateError(body: unknown): HttpError | undefined {
  const path = loneSurrogatePath(body);
  return path === undefined
    ? undefined
    : new HttpError(
        422,
        `body${path === '' ? '' : `.${path}`}: holds a lone surrogate (half of a UTF-16 pair, escaped alone), which UTF-8 cannot keep; ` +
          `send well-formed Unicode`,
      );
}

/** body-parser's JSON rules with `strict: false`: an empty body is `{}`, any JSON value parses. */
function parseJson(text: string): unknown {
  if (text.length === 0) return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw bodyError('entity.parse.failed');
  }
}

/**
 * JSON bodies only, 64 KiB at most, nested at most MAX_BODY_DEPTH levels. `strict: false` lets any JSON value parse so that a
 * non-object body is answered 422 by validation rather than 400 as malformed.
 *
 * Nearly every body arrives as plain UTF-8 JSON with one of a few Content-Type headers; those are
 * read straight from the stream, which costs a fraction of body-parser's path (type checks,
 * charset parsing and decoder set-up per request; git show d1df1cf:docs/benchmark-history.md, "The HTTP layer"). Everything
 * else takes body-parser, so compressed bodies, charsets and their refusals behave as they always did.
 * The next handler runs from the stream's `end`, in the stream's async context, as with any stream
 * listener: middleware that keeps a request's async context (idempotency-key.ts) is mounted after this.
 */
export function jsonBody(bodies: RequestBodies, turns: LargeBodyTurns): RequestHandler[] {
  const requireJson: RequestHandler = (req, _res, next) => {
    const hasBody = req.method === 'POST' || req.method === 'PUT' || req.method === 'PATCH';
    // A POST with no body (none announced, or `Content-Length: 0`) has no type to check and reads
    // as `{}`, as an empty body does (a retry names its delivery in the path alone); a body of any
    // other type is refused.
    const length = req.headers['content-length'];
    const empty = length === '0' || (length === undefined && req.headers['transfer-encoding'] === undefined);
    if (hasBody && !empty && !req.is('application/json')) {
      throw new HttpError(415, 'Content-Type must be application/json');
    }
    // body-parser would decode UTF-16 and UTF-32 too; the contract is UTF-8 JSON.
    const type = req.get('content-type') ?? '';
    const charset = CHARSET.exec(type)?.[1]?.toLowerCase();
    if (hasBody && charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')
      throw bodyError('charset.unsupported');
    // `utf8` is UTF-8's common misspelling, which body-parser refuses: named as it knows it.
    if (charset === 'utf8')
      req.headers['content-type'] = type.replace(CHARSET, (parameter) => parameter.replace(/utf8/i, 'utf-8'));
    next();
  };
  const readOtherBody = inSequence(
    requireJson,
    express.json({
      limit: BODY_LIMIT_BYTES,
      strict: false,
      // After decompression, before decoding: a body that is not UTF-8 is refused, not changed.
      verify: (_req, _res, buffer) => {
        if (!isUtf8(buffer)) throw bodyError('body.not.utf8');
      },
    }),
    (req, _res, next) => next(loneSurrogateError(req.body)),
  );
  const readBody: RequestHandler = (req, res, next) => {
    if (!hasBody(req)) return isPlainJson(req) ? next() : readOtherBody(req, res, next);
    const plain = isPlainJson(req);
    // A compressed body may inflate to the whole limit, whatever it announced.
    const line = bodies.open(req, BODY_LIMIT_BYTES, plain ? undefined : BODY_LIMIT_BYTES);
    if (!line) {
      req.resume();
      return next(bodiesFull(res));
    }
    if (!plain) {
      const large = meterStream(req, bodies, line);
      // Parsed already (body-parser reads and parses as one), but validated and masked in its own turn.
      return readOtherBody(req, res, (error?: unknown) => {
        if (!large()) return next(error);
        turns.take(() => {
          if (!line.open && error === undefined) return next(bodyError('request.aborted'));
          bodies.close(line);
          next(error);
        });
      });
    }
    readText(
      req,
      BODY_LIMIT_BYTES,
      bodies,
      line,
      turns,
      () => bodiesFull(res),
      (error, text) => {
        if (error) return next(error);
        try {
          req.body = parseJson(text!);
        } catch (parseError) {
          return next(parseError);
        }
        // Nearly every body has no surrogate escape at all, and is not walked for one.
        if (mayHoldLoneSurrogate(text!)) return next(loneSurrogateError(req.body));
        next();
      },
    );
  };
  const boundedDepth: RequestHandler = (req, _res, next) => {
    const path = tooDeepPath(req.body as unknown);
    if (path !== undefined) throw new HttpError(422, `body.${path}: nested deeper than ${MAX_BODY_DEPTH} levels`);
    next();
  };
  return [readBody, boundedDepth];
}
