import { AsyncLocalStorage } from 'node:async_hooks';

/** The request's `Idempotency-Key`, for the session command it leads to (SESSION_HOST=restate). */
const requestKey = new AsyncLocalStorage<string | undefined>();

/**
 * SESSION_HOST=restate: runs `next` with the request's key in reach of the session command it
 * leads to, so that command reaches its session's object with that key, and Restate runs it once
 * and answers a retry with the first answer, whichever process the retry reaches.
 */
export const withIdempotencyKey = (key: string, next: () => void): void => requestKey.run(key, next);

export const currentIdempotencyKey = (): string | undefined => requestKey.getStore();
