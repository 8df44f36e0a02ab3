import type { RequestHandler, Response } from 'express';
import { HttpError } from '../http-error.js';
import type { ReplayWindow } from '../replay-window.js';
import { stringify } from 'safe-stable-stringify';
import { withNamedRequest } from '../../actor-system/named-request.js';
import { digestOf } from '../../domain/digest.js';

/** A first answer, as a replay repeats it. */
export interface StoredAnswer {
  status: number;
  contentType: string | undefined;
  body: Buffer;
}

/** Answers larger than this are not kept (none of the service's writes answers with near as much). */
const MAX_KEPT_ANSWER_BYTES = 64 * 1024;
const CHANGES_STATE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * A request that changes state and carries `Idempotency-Key` or `X-Request-ID` is run once per
 * client within the replay window (REPLAY_WINDOW_SECONDS): a copy sent again, while the first is
 * still under way or after, gets the first one's answer and changes nothing. A client is its
 * address and its key. The same id on a different request (another method, path, query or body,
 * the path spelled another way included) is a 422, never run again; a first answer that was a
 * refusal is not repeated, so the retry is run afresh, one copy at a time (docs/reference/limits.md).
 */
export function replays(
  window: ReplayWindow<StoredAnswer>,
  kept?: (key: string) => { fingerprint: string } | undefined,
): RequestHandler {
  return (req, res, next) => {
    if (!CHANGES_STATE.has(req.method)) return next();
    const sentKey = req.get('idempotency-key');
    const id = sentKey ?? req.get('x-request-id');
    if (id === undefined || id === '') return next();
    const header = sentKey !== undefined ? 'Idempotency-Key' : 'X-Request-ID';
    // The id alone names the request, whatever it was sent to: the same id sent to another route
    // (or to the same one spelled `/V1/EVENTS/`) must not run a second change.
    const key = digestOf(req.ip ?? '', req.get('x-api-key') ?? '', id);
    // The body as canonical JSON (keys sorted at every depth): the same JSON with its keys in
    // another order is the same request, so a retry that re-serialized it is still a replay.
    const fingerprint = digestOf(req.method, req.originalUrl, stringify(req.body ?? null) ?? 'null');
    const conflict = () =>
      new HttpError(
        422,
        `${header}: already used for a different request within the last REPLAY_WINDOW_SECONDS; send a new id`,
      );
    // Run inside the request's name: a session's reply to it is kept with its change (named-request.ts).
    const run = () => withNamedRequest({ key, fingerprint }, next);
    const check = window.check(key, fingerprint);
    if (check.kind === 'conflict') throw conflict();
    if (check.kind === 'first') {
      // The window is this process's; the store's kept replies outlive it: the id used before a restart for another request.
      const before = kept?.(key);
      if (before && before.fingerprint !== fingerprint) {
        check.settle(undefined);
        throw conflict();
      }
      keepAnswer(res, check.settle);
      return run();
    }
    window.afterFirst(key, fingerprint, check.answer).then(
      (turn) => {
        if (turn.kind === 'answer') return repeat(res, turn.answer);
        if (turn.kind === 'conflict') return next(conflict());
        // Its client left while it waited: it runs nothing, and hands the turn to the next copy
        // (a response already closed never finishes, so its answer would never be known).
        if (res.destroyed || req.socket.destroyed) return turn.settle(undefined);
        // The first changed nothing: this copy runs, and any other copy waits for it.
        keepAnswer(res, turn.settle);
        run();
      },
      (error: unknown) => next(error),
    );
  };
}

function repeat(res: Response, answer: StoredAnswer): void {
  if (res.destroyed) return;
  if (answer.contentType !== undefined) res.setHeader('Content-Type', answer.contentType);
  res.status(answer.status).end(answer.body);
}

/** Collects what the route writes; a 2xx answer is kept for replays, anything else forgotten. */
function keepAnswer(res: Response, settle: (answer: StoredAnswer | undefined, sizeBytes?: number) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  const collect = (chunk: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function' || size > MAX_KEPT_ANSWER_BYTES) return;
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array);
    size += bytes.length;
    chunks.push(bytes);
  };
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    collect(chunk);
    return write(chunk, ...rest);
  }) as Response['write'];
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    collect(chunk);
    return end(chunk, ...rest);
  }) as Response['end'];
  let settled = false;
  const done = (answer: StoredAnswer | undefined) => {
    if (settled) return;
    settled = true;
    settle(answer, answer?.body.length);
  };
  res.once('finish', () => {
    const kept = res.statusCode >= 200 && res.statusCode < 300 && size <= MAX_KEPT_ANSWER_BYTES;
    const type = res.getHeader('content-type');
    done(
      kept
        ? {
            status: res.statusCode,
            contentType: typeof type === 'string' ? type : undefined,
            body: Buffer.concat(chunks),
          }
        : undefined,
    );
  });
  // Cut before it was answered: whether it was applied is unknown, so a retry is run afresh.
  res.once('close', () => done(undefined));
}
