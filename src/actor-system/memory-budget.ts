import { HELD_BYTES_FACTOR } from '../domain/held-density.js';

/**
 * What a session is estimated to cost in memory: a fixed part (its actor, or its held context,
 * and the registry entries) plus its client data at twice its JSON size (parsed objects and
 * strings cost more than their text), or more for data nested more than an SDK's
 * (`held_density`: a JSON of empty arrays costs the heap 13 times its size). Checked against the
 * heap that running sessions of each shape add after a full collection (`npm run bench --
 * --only=session-memory`): the estimate is never below the heap measured (docs/reference/limits.md).
 */
export const SESSION_OVERHEAD_BYTES = 8 * 1024;
export { HELD_BYTES_FACTOR };
/**
 * The share of MEMORY_BUDGET_MB sessions may take. Well below V8's heap limit (HEAP_SHARE), which
 * is what the process needs beside its sessions at their most (its code, the replay windows, the
 * requests of a flood in flight) and the room V8 needs to collect without failing: with both at
 * three quarters, a flood of new sessions reached the heap limit before the estimate refused
 * anyone. And below half: RSS is the sessions' heap plus what V8 has not yet collected, the
 * process at rest (about 155 MiB) and the other shares, and with sessions at a half the flood's
 * slow bodies, after its stalled readers, took RSS to 1,021–1,059 MiB of 1,024 (docs/reference/limits.md).
 */
export const SESSION_SHARE = 0.4;
/** V8's heap limit as a share of MEMORY_BUDGET_MB; the rest of the budget is memory outside the heap (SQLite's cache, stream buffers, code). */
export const HEAP_SHARE = 0.75;

/**
 * The share of MEMORY_BUDGET_MB the activity streams' unread bytes may take together (Buffers,
 * outside V8's heap but inside RSS): without it, SSE_MAX_STREAMS readers that stop reading could
 * each queue SSE_MAX_BUFFER_BYTES, 2 GB at the defaults (docs/reference/limits.md).
 */
export const STREAM_BUFFER_SHARE = 0.05;
export const streamBufferBudgetBytes = (memoryBudgetMb: number): number =>
  Math.floor(memoryBudgetMb * 2 ** 20 * STREAM_BUFFER_SHARE);

/**
 * The share of MEMORY_BUDGET_MB the request bodies still arriving may take together (Buffers,
 * outside V8's heap but inside RSS): a client decides how long its body takes to arrive, so
 * without it 10,500 trickled bodies held 672 MB (src/http/request-bodies.ts, docs/reference/limits.md).
 */
export const REQUEST_BODY_SHARE = 0.05;
export const requestBodyBudgetBytes = (memoryBudgetMb: number): number =>
  Math.floor(memoryBudgetMb * 2 ** 20 * REQUEST_BODY_SHARE);

/**
 * The share of MEMORY_BUDGET_MB that answers clients have not read may take together, node's part
 * (Buffers, inside RSS): without it, MAX_CONNECTIONS connections that ask for an activity page and
 * stop reading could each hold one (src/http/unread-answers.ts, docs/reference/limits.md).
 */
export const UNREAD_ANSWER_SHARE = 0.05;
export const unreadAnswerBudgetBytes = (memoryBudgetMb: number): number =>
  Math.floor(memoryBudgetMb * 2 ** 20 * UNREAD_ANSWER_SHARE);

/**
 * V8's old-space limit for a budget, in MiB. V8 lets garbage pile up to its limit before
 * collecting hard, so without it RSS passes the budget with the live heap well below it
 * (`npm start` passes `--max-old-space-size` accordingly).
 */
export const heapLimitMbFor = (memoryBudgetMb: number): number => Math.floor(memoryBudgetMb * HEAP_SHARE);

/**
 * The `--max-old-space-size` among node's flags (its last one), if any: what start-up checks
 * against heapLimitMbFor. V8's own heap limit is no test of it, as it adds the young generation
 * (about 192 MB on Node 24) to the old space.
 */
export function oldSpaceLimitMb(flags: readonly string[]): number | undefined {
  let limit: number | undefined;
  for (const flag of flags) {
    const match = /^--max[-_]old[-_]space[-_]size=(\d+)$/.exec(flag);
    if (match) limit = Number(match[1]);
  }
  return limit;
}

export interface MemoryUse {
  budget_bytes: number;
  used_bytes: number;
  sessions: number;
}

/**
 * One session's line in the budget. The supervisor keeps it beside the session's actor and charges
 * it on every change, so an event costs no lookup among all the sessions held: at 100,000 held, two
 * lookups in a Map of that size per event were a tenth of the step (docs/decisions/0016-pretenuring-off-and-memory-accounts.md).
 */
export interface SessionAccount {
  /** What the session is counted at now; 0 once it is forgotten. */
  readonly cost: number;
}

interface OpenAccount {
  cost: number;
  open: boolean;
}

/**
 * The process-wide memory budget of sessions (`MEMORY_BUDGET_MB`). The supervisor tells it what each
 * session it holds (running or hibernated) holds, as measured at ingest (`held_bytes`), and asks it
 * before it brings a new session into being. Parts of the service that hold memory beside the
 * sessions (the activity actor) hold their line in it too. No timers, no I/O: an account kept by
 * its owner.
 */
export class MemoryBudget {
  private readonly sessions = new Map<string, OpenAccount>();
  /** What parts of the service other than sessions hold for as long as they run (the activity actor). */
  private readonly parts = new Map<string, number>();
  private used = 0;
  /** What the accounts closed so far were counted at, added up: only grows (the heap trim reads it). */
  private released = 0;
  readonly budgetBytes: number;

  constructor(memoryBudgetMb: number) {
    this.budgetBytes = Math.floor(memoryBudgetMb * 2 ** 20 * SESSION_SHARE);
  }

  /** The session's account, opened (at no cost yet: charge it what the session holds) if it has none. */
  account(sessionId: string): SessionAccount {
    let account = this.sessions.get(sessionId);
    if (!account) {
      account = { cost: 0, open: true };
      this.sessions.set(sessionId, account);
    }
    return account;
  }

  /** The account's session now holds `heldBytes` of client data, at `density` heap bytes each. An account since closed stays closed. */
  charge(account: SessionAccount, heldBytes: number, density = HELD_BYTES_FACTOR): void {
    const line = account as OpenAccount;
    if (!line.open) return;
    const cost = SESSION_OVERHEAD_BYTES + Math.ceil(Math.max(HELD_BYTES_FACTOR, density) * heldBytes);
    this.used += cost - line.cost;
    line.cost = cost;
  }

  /** The session is no longer held in memory: its account closes and its cost leaves the total. */
  close(sessionId: string): void {
    const account = this.sessions.get(sessionId);
    if (!account) return;
    this.used -= account.cost;
    this.released += account.cost;
    account.cost = 0;
    account.open = false;
    this.sessions.delete(sessionId);
  }

  /** `part` of the service now holds `bytes`; counted with the sessions, so what it holds is room they do not get. */
  hold(part: string, bytes: number): void {
    this.used += bytes - (this.parts.get(part) ?? 0);
    this.parts.set(part, bytes);
  }

  /** Forgets every session; the parts' lines stay, as the parts still run. */
  clear(): void {
    for (const account of this.sessions.values()) {
      this.released += account.cost;
      account.cost = 0;
      account.open = false;
    }
    this.sessions.clear();
    this.used = 0;
    for (const bytes of this.parts.values()) this.used += bytes;
  }

  /** Whether one more session fits. */
  get hasRoom(): boolean {
    return this.used + SESSION_OVERHEAD_BYTES <= this.budgetBytes;
  }

  /** What every session that left memory was counted at when it left, added up since the start: how much a burst left behind to give back. */
  releasedBytes(): number {
    return this.released;
  }

  use(): MemoryUse {
    return { budget_bytes: this.budgetBytes, used_bytes: this.used, sessions: this.sessions.size };
  }
}
