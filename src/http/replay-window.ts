import { LRUCache } from 'lru-cache';

/** What a replay is answered with: the first answer, once it is known; `undefined` when it is not to be repeated. */
interface Seen<T> {
  /** A digest of the request itself: the same id for another request is not a replay. */
  fingerprint: string;
  answer: Promise<T | undefined>;
  size: number;
}

export type ReplayCheck<T> =
  /** The first of its id: run it, then `settle` with the answer to repeat (or undefined: a refusal, not to be repeated). */
  | { kind: 'first'; settle: (answer: T | undefined, sizeBytes?: number) => void }
  /** Seen within the window: `answer` is the first one's (undefined if it was refused: run this one afresh). */
  | { kind: 'replay'; answer: Promise<T | undefined> }
  /** The id was used for a different request within the window. */
  | { kind: 'conflict' };

export interface ReplayWindowOptions {
  windowMs: number;
  /**
   * The answers' bytes together, each counted at ENTRY_OVERHEAD_BYTES more than its own size: what
   * replays may cost in memory (docs/reference/limits.md), and so a bound on their number too.
   */
  maxBytes: number;
  now: () => number;
}

/** Bytes an entry is counted at besides its answer: the key, the fingerprint and the cache's own slot. */
export const ENTRY_OVERHEAD_BYTES = 256;

/**
 * Requests a client sent again with the same id (X-Request-ID, Idempotency-Key, a frame's
 * message_id) within a window: the first is run, every replay gets its answer and changes nothing.
 * An answer that was a refusal is forgotten, so a retry after a 503 is run afresh. Bounded by
 * count and by bytes, the oldest going first; keys are digests, so no client text is kept.
 */
export class ReplayWindow<T> {
  private readonly seen: LRUCache<string, Seen<T>>;

  constructor(options: ReplayWindowOptions) {
    // No `max`: given one, the cache allocates its slots up front (megabytes for every window of
    // every app, before a request is seen); the bytes bound the count (REPLAY_MAX_BYTES).
    this.seen = new LRUCache<string, Seen<T>>({
      maxSize: options.maxBytes,
      sizeCalculation: (entry) => entry.size,
      ttl: options.windowMs,
      // No timers and no cached time: the injected clock is the only one.
      ttlResolution: 0,
      perf: { now: options.now },
    });
  }

  /**
   * A copy's wait: the first one's answer; or, when the first was refused or cut (no answer to
   * repeat), this copy's turn to run as the new first, the copies taking turns so that one runs
   * at a time and the rest get its answer.
   */
  async afterFirst(key: string, fingerprint: string, pending: Promise<T | undefined>): Promise<CopyTurn<T>> {
    for (let waited = pending; ;) {
      const answer = await waited;
      if (answer !== undefined) return { kind: 'answer', answer };
      const check = this.check(key, fingerprint);
      if (check.kind !== 'replay') return check;
      waited = check.answer;
    }
  }

  check(key: string, fingerprint: string): ReplayCheck<T> {
    const seen = this.seen.get(key);
    if (seen) return seen.fingerprint === fingerprint ? { kind: 'replay', answer: seen.answer } : { kind: 'conflict' };
    let settle!: (answer: T | undefined) => void;
    const entry: Seen<T> = {
      fingerprint,
      answer: new Promise((resolve) => (settle = resolve)),
      size: ENTRY_OVERHEAD_BYTES,
    };
    this.seen.set(key, entry);
    return {
      kind: 'first',
      settle: (answer, sizeBytes = 0) => {
        settle(answer);
        if (this.seen.peek(key) !== entry) return;
        if (answer === undefined) this.seen.delete(key);
        // Counted again at its answer's size (set keeps the entry's age: the window runs from the first).
        else this.seen.set(key, { ...entry, size: ENTRY_OVERHEAD_BYTES + sizeBytes }, { noUpdateTTL: true });
      },
    };
  }
}

/** What a copy gets once the answer it waited for is known. */
export type CopyTurn<T> = { kind: 'answer'; answer: T } | Exclude<ReplayCheck<T>, { kind: 'replay' }>;

/**
 * Bytes each window keeps at most: part of the process's own share of MEMORY_BUDGET_MB
 * (docs/reference/limits.md). At ENTRY_OVERHEAD_BYTES an answer at least, that is 65,536 answers at most.
 */
export const REPLAY_MAX_BYTES = 16 * 2 ** 20;

export const replayBounds = (windowSeconds: number, clock: { now(): number }): ReplayWindowOptions => ({
  windowMs: windowSeconds * 1000,
  maxBytes: REPLAY_MAX_BYTES,
  now: () => clock.now(),
});
