/**
 * The request a command belongs to, when its client named it (`Idempotency-Key`, `X-Request-ID`):
 * the HTTP layer runs the request inside it, and delivery keeps the session's reply with the
 * change it answers, in the same commit, so that a copy sent after a restart gets the reply
 * again and changes nothing (docs/reference/limits.md, Replays).
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface NamedRequest {
  /** A digest of the client and its id (middleware/replays.ts): no client text. */
  key: string;
  /** A digest of the request itself: the same id on another request is not a copy of it. */
  fingerprint: string;
}

const current = new AsyncLocalStorage<NamedRequest>();

export const withNamedRequest = (request: NamedRequest, next: () => void): void => current.run(request, next);

export const currentNamedRequest = (): NamedRequest | undefined => current.getStore();

/** Replies larger than this are not kept: a session's replies are a few hundred bytes (docs/reference/limits.md). */
export const MAX_KEPT_REPLY_BYTES = 4096;

/**
 * A reply that refused the command (a voice command while too many wait): nothing changed, so it
 * is not kept, and a copy is run afresh, as a refusal is over HTTP.
 */
export const isRefusal = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && (value as { busy?: unknown }).busy === true;

/**
 * How a reply is kept for a copy of its request when it holds something that must not be kept at
 * rest: a credential (the LiveKit token of a voice start). What is kept is `kept(value)`, as
 * JSON; a copy is answered with `answer` of what was kept, which makes the credential anew
 * (docs/decisions/0033-no-credential-kept-with-a-reply.md). Methods, not function properties:
 * delivery holds any `Kept` as `unknown`, and reads back only what `kept` wrote.
 */
export interface ReplyKeeping<T, Kept = unknown> {
  kept(value: T): Kept;
  answer(kept: Kept): Promise<T>;
}
