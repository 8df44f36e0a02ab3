import { randomUUID } from 'node:crypto';
import type { Redis, Result } from 'ioredis';
import type { ActivityDraft, ActivityItem } from '../domain/activity.js';
import { RecordedTimes, activityItem } from '../domain/activity.js';
import { isoTime } from '../integrations/clock.js';
import { ItemReader } from './item-reader.js';
import { redisAddress } from '../config/redis-address.js';
import { connectRedis } from './redis-connection.js';
import {
  MAY_HAVE_BEEN_APPLIED,
  StoreInDoubtError,
  StoreUnavailableError,
  type ActivityLog,
  type ActivityQuery,
  type KeyedDraft,
  type StoreHealth,
} from './ports.js';

/**
 * Appends one item to the stream, once per write key. The item id is chosen here, inside the
 * script (atomic on the server), so that it is both a valid stream id and a safe integer: the
 * numeric id n is stream id `floor(n/1000)-(n%1000)`, at least the server's time in ms × 1000 and
 * above every id given before, whichever node writes. A write key seen before returns the id it
 * got then and writes nothing: a retried commit does not record an item twice.
 * KEYS: stream, last-id key, write key. ARGV: approximate max length, item JSON, dedupe TTL (s).
 */
const APPEND_ONCE = `
local done = redis.call('GET', KEYS[3])
if done then return done end
local t = redis.call('TIME')
local n = tonumber(t[1]) * 1000000 + math.floor(tonumber(t[2]) / 1000) * 1000
local last = tonumber(redis.call('GET', KEYS[2]) or '0')
if n <= last then n = last + 1 end
local ms = math.floor(n / 1000)
local id = string.format('%d-%d', ms, n - ms * 1000)
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], id, 'item', ARGV[2])
local text = string.format('%d', n)
redis.call('SET', KEYS[2], text)
redis.call('SET', KEYS[3], text, 'EX', tonumber(ARGV[3]))
return text
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** APPEND_ONCE, sent by its SHA once the connection has loaded it. */
    appendOnce(
      stream: string,
      lastKey: string,
      writeKey: string,
      maxLength: string,
      json: string,
      ttlSeconds: string,
    ): Result<string, Context>;
  }
}

/** How long a write key is remembered: far longer than any retry of one commit. */
const DEDUPE_TTL_SECONDS = 86_400;
/** The tail's XREAD BLOCK timeout: only how often a closing log notices, not a latency. */
const TAIL_BLOCK_MS = 1_000;
const TAIL_BATCH = 1_000;
/** Entries an erasure reads, or deletes, per round trip. */
const ERASE_SCAN_BATCH = 1_000;
/**
 * How long a `writeNow` may wait on a server that accepted the connection but does not answer.
 * Past it the write is in doubt, not refused: it may land later (docs/explanation/cluster.md, Outages).
 */
const WRITE_NOW_TIMEOUT_MS = 2_000;
/** An error Redis answered with: the command ran and applied nothing (a script or a transaction is all or none). */
const isReplyError = (error: unknown): boolean => error instanceof Error && error.name === 'ReplyError';
/** How long a commit waits for Redis to answer a PING before it sends anything. */
const PROBE_BEFORE_WRITE_MS = 1_000;
/**
 * How long a write waits for the replicas it must reach (`replicas`) before it is in doubt. Under
 * WRITE_NOW_TIMEOUT_MS, so that the answer says why; the write stays on the primary
 * (docs/how-to/production.md, Redis).
 */
const REPLICATED_WITHIN_MS = 1_000;

type StoredItem = Omit<ActivityItem, 'id'>;

/** APPEND_ONCE's keys and arguments. */
type AppendArgs = [
  stream: string,
  lastKey: string,
  writeKey: string,
  maxLength: string,
  json: string,
  ttlSeconds: string,
];

interface Pending {
  writeKey: string;
  json: string;
}

export interface RedisActivityLogOptions {
  /** A redis:// URL or a redis+sentinel:// address (src/config/redis-address.ts). */
  url: string;
  /** The stream's key; the last-id and write keys share its hash tag, so one Redis Cluster slot holds them all. */
  key?: string;
  /** Items held locally for reads and the stream's approximate MAXLEN. */
  capacity: number;
  /** Told once of each entry that is not an item (it is skipped). */
  onUnreadableItem?: (id: number) => void;
  /**
   * Cluster mode: this process's own commits are a few requests' items (a flow's graph, a trigger
   * without a session), and a refused request must leave nothing behind. So a commit asks Redis
   * with a PING before it sends anything, and a refused commit's items are dropped. With embedded
   * sessions (false) every group of events commits here: a PING each would double its round trips,
   * and a refused commit's items stay queued for the next, since the sessions kept their change.
   */
  refusalsLeaveNothing?: boolean;
  /**
   * Replicas that must hold a write (WAIT) before it is acknowledged: 1 through Sentinel, where a
   * replica is promoted without anyone deciding to, and an item only the old primary held would be
   * lost after its request was told it is recorded; 0 for one server's URL (docs/how-to/production.md, Redis).
   */
  replicas?: number;
}

/** `1700000000123-4` ⇄ 1700000000123004: the stream id as the integer the API and SSE ids use. */
export function numericId(streamId: string): number {
  const [ms, seq] = streamId.split('-');
  return Number(ms) * 1000 + Number(seq);
}

export function streamId(id: number): string {
  const ms = Math.floor(id / 1000);
  return `${ms}-${id - ms * 1000}`;
}

/**
 * ACTIVITY_LOG=redis://…: the activity log is one Redis Stream shared by every service process.
 * Appends are queued and written by `commit()`; every process follows the stream with XREAD
 * BLOCK and keeps the newest `capacity` items, which reads (the activity list, SSE replay) are
 * served from and which SSE listeners hear of, in stream order. `commit()` resolves once this
 * process has read back what it wrote, so a response sees its own write. The item `append`
 * returns gets its id when the commit writes it (nothing reads it before).
 */
export class RedisActivityLog implements ActivityLog {
  private readonly redis: Redis;
  private readonly tail: Redis;
  /** `writeNow`'s connection: no offline queue, so a write refused while disconnected is never sent later. */
  private readonly direct: Redis;
  private readonly key: string;
  private readonly lastKey: string;
  private readonly writePrefix: string;
  private readonly capacity: number;
  private readonly listeners = new Set<(item: ActivityItem) => void>();
  /** Held items, oldest first, ids increasing. */
  private held: ActivityItem[] = [];
  /** Items up to this id are no longer held (trimmed here or before this process read them). */
  private droppedThrough = 0;
  private lastSeen = 0;
  private readonly times = new RecordedTimes();
  private queue: Pending[] = [];
  private writeSeq = 0;
  private flushing: Promise<void> = Promise.resolve();
  private waiters: { id: number; resolve: () => void }[] = [];
  private lastError: string | undefined;
  private readonly refusalsLeaveNothing: boolean;
  private readonly replicas: number;
  /** Why the last PING (`answers`) got no answer, until one does. */
  private unanswered: string | undefined;
  private closed = false;
  private readonly itemReader: ItemReader;
  readonly ready: Promise<void>;

  constructor(options: RedisActivityLogOptions) {
    this.itemReader = new ItemReader(options.onUnreadableItem);
    this.key = options.key ?? '{kyc-activity}';
    this.lastKey = `${this.key}:last`;
    this.writePrefix = `${this.key}:write:${randomUUID()}:`;
    this.capacity = options.capacity;
    this.refusalsLeaveNothing = options.refusalsLeaveNothing ?? false;
    const address = redisAddress(options.url);
    this.replicas = options.replicas ?? (address.kind === 'sentinel' ? 1 : 0);
    // Each connection sends the script's text once, then its SHA: the text on every append was most of what an append wrote to the socket.
    this.redis = connectRedis(address, {
      lazyConnect: true,
      maxRetriesPerRequest: 2,
      scripts: { appendOnce: { numberOfKeys: 3, lua: APPEND_ONCE } },
    });
    this.tail = this.redis.duplicate();
    // Auto-pipelined: the appends of invocations that run in the same turn of the event loop (Restate
    // hands them over in bursts) reach Redis in one write, which cut Redis's CPU per event by a third
    // (BENCHMARKS.md, CPU per event). Each keeps its own answer, refusal and timeout.
    // A write whose connection breaks before its answer is not sent again on the next connection
    // either, as ioredis does by default: its timeout had refused it, and it was applied seconds later
    // on a restarted Redis or a promoted replica (docs/explanation/cluster.md, "Never applied after a refusal").
    this.direct = this.redis.duplicate({
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      commandTimeout: WRITE_NOW_TIMEOUT_MS,
      enableAutoPipelining: true,
    });
    this.redis.on('error', (error: Error) => (this.lastError = error.message));
    this.tail.on('error', () => {});
    this.direct.on('error', (error: Error) => (this.lastError = error.message));
    // Back: a process whose writes all run elsewhere (events sent one-way) may write nothing to clear it.
    this.direct.on('ready', () => (this.lastError = undefined));
    this.ready = this.start();
  }

  append(draft: ActivityDraft, writeKey?: string): ActivityItem {
    const stored = this.stored(draft);
    this.writeSeq += 1;
    this.queue.push({
      writeKey: writeKey === undefined ? this.writePrefix + this.writeSeq : `${this.key}:write:${writeKey}`,
      json: JSON.stringify(stored),
    });
    return { id: '', ...stored };
  }

  /**
   * The item as the stream keeps it (its id is the entry's), timed in the order this process
   * writes: another process stamps with its own clock, so across processes times follow each
   * writer's clock (docs/how-to/production.md, Redis).
   */
  private stored(draft: ActivityDraft): StoredItem {
    const { id: _id, ...stored } = activityItem('', isoTime(this.times.next(draft.at)), draft);
    return stored;
  }

  list(query: ActivityQuery): ActivityItem[] {
    const { sessionId, kind } = query;
    const picked: ActivityItem[] = [];
    for (let index = this.held.length - 1; index >= 0 && picked.length < query.limit; index -= 1) {
      const item = this.held[index]!;
      if ((sessionId === undefined || item.session_id === sessionId) && (kind === undefined || item.kind === kind))
        picked.push(item);
    }
    return picked.reverse();
  }

  after(afterId: number, limit = Number.POSITIVE_INFINITY): { items: ActivityItem[]; gap: boolean } {
    const start = this.firstAbove(afterId);
    return { items: this.held.slice(start, start + limit), gap: afterId < this.droppedThrough };
  }

  bounds(): { oldestId: number | undefined; lastId: number } {
    const oldest = this.held[0];
    return { oldestId: oldest ? Number(oldest.id) : undefined, lastId: this.lastSeen };
  }

  onRecorded(listener: (item: ActivityItem) => void): { unsubscribe(): void } {
    const wrapped = (item: ActivityItem) => listener(item);
    this.listeners.add(wrapped);
    return { unsubscribe: () => this.listeners.delete(wrapped) };
  }

  commit(): Promise<void> {
    const turn = this.flushing.catch(() => undefined).then(() => this.flush());
    this.flushing = turn;
    return turn;
  }

  async writeNow(items: readonly KeyedDraft[]): Promise<number> {
    if (items.length === 0) return this.lastSeen;
    const appends = items.map(({ draft, writeKey }): AppendArgs => {
      const stored = this.stored(draft);
      return [
        this.key,
        this.lastKey,
        `${this.key}:write:${writeKey}`,
        String(this.capacity),
        JSON.stringify(stored),
        String(DEDUPE_TTL_SECONDS),
      ];
    });
    // With no offline queue, a connection not ready refuses at once, sending nothing.
    const sent = this.direct.status === 'ready';
    let ids: unknown[];
    try {
      // One script call is atomic on its own; more go in one transaction: all of them or none.
      ids = appends.length === 1 ? [await this.direct.appendOnce(...appends[0]!)] : await this.inTransaction(appends);
    } catch (error) {
      this.lastError = error instanceof Error ? error.message : String(error);
      // Refused for certain: nothing was sent, or Redis answered with an error (NOREPLICAS,
      // READONLY, EXECABORT), which applies nothing of a script or a transaction.
      if (!sent || isReplyError(error)) throw new StoreUnavailableError(`activity log: ${this.lastError}`);
      ids = await this.settle(
        appends.map((args) => args[2]),
        this.lastError,
      );
    }
    if (ids.length !== items.length) throw new StoreInDoubtError('activity log: transaction answered short');
    try {
      await this.replicated();
    } catch (error) {
      // The primary has the write: it stays there unless a replica without it is promoted.
      this.lastError = error instanceof Error ? error.message : String(error);
      throw new StoreInDoubtError(`activity log: ${this.lastError}; ${MAY_HAVE_BEEN_APPLIED}`);
    }
    this.lastError = undefined;
    return Math.max(...ids.map(Number));
  }

  /**
   * A write that went out and got no answer (its bound passed, its connection closed): asked once
   * more whether its write keys are there. All there, it was applied, and the ids they hold are its
   * answer. Otherwise it is in doubt: not there yet is not never, as a write still on its way (a
   * Redis that stalled, a primary being replaced) may land after the look
   * (docs/decisions/0047-a-write-in-doubt-is-not-a-refusal.md).
   */
  private async settle(writeKeys: readonly string[], cause: string): Promise<string[]> {
    let found: (string | null)[] = [];
    try {
      found = await this.direct.mget(...writeKeys);
    } catch {
      // No answer to the look either: in doubt, as it was.
    }
    if (found.length === writeKeys.length && found.every((id) => id !== null && /^\d+$/.test(id)))
      return found as string[];
    throw new StoreInDoubtError(`activity log: ${cause}; ${MAY_HAVE_BEEN_APPLIED}`);
  }

  /**
   * Erasure (docs/explanation/calls.md): deletes every entry of the stream whose item is of one of these
   * sessions or names this user, and appends a marker entry listing their ids (ids only, nothing
   * of the user) that every process reads in stream order and drops from what it holds (`forget`), so no
   * process's reads show them again, one that was disconnected included. Scans the whole stream:
   * an erasure is rare, and the stream is at most ACTIVITY_RETENTION_ITEMS long.
   */
  async eraseShared(sessionIds: ReadonlySet<string>, userId: string): Promise<number> {
    const erased: string[] = [];
    for (let start = '-'; ;) {
      const reply = (await this.direct.call(
        'XRANGE',
        this.key,
        start,
        '+',
        'COUNT',
        String(ERASE_SCAN_BATCH),
      )) as unknown[];
      const { items } = this.parseEntries(reply);
      for (const item of items)
        if ((item.session_id !== null && sessionIds.has(item.session_id)) || item.user_id === userId)
          erased.push(streamId(Number(item.id)));
      if (reply.length < ERASE_SCAN_BATCH) break;
      start = `(${(reply.at(-1) as [string])[0]}`;
    }
    for (let index = 0; index < erased.length; index += ERASE_SCAN_BATCH)
      await this.direct.call('XDEL', this.key, ...erased.slice(index, index + ERASE_SCAN_BATCH));
    if (erased.length > 0)
      await this.direct.call('XADD', this.key, '*', 'erase', JSON.stringify(erased.map(numericId)));
    // An erasure only the old primary had would bring the erased items back with a promoted replica.
    if (erased.length > 0) await this.replicated();
    return erased.length;
  }

  private async inTransaction(appends: readonly AppendArgs[]): Promise<unknown[]> {
    const transaction = this.direct.multi();
    for (const args of appends) transaction.appendOnce(...args);
    const results = (await transaction.exec()) ?? [];
    const failed = results.filter(([error]) => error);
    // Every append answered an error (NOREPLICAS, READONLY): none applied, a refusal as one script's is.
    if (failed.length > 0 && failed.length === results.length) throw failed[0]![0]!;
    return results.map(([error, id]) => {
      // Only some failed: the others were applied, so it is not a refusal.
      if (error) throw new Error(`an append of the transaction failed: ${error.message}`);
      return id;
    });
  }

  /**
   * Resolves once `replicas` replicas hold everything this connection wrote so far (WAIT counts
   * them); otherwise it rejects, and the primary has the write (docs/how-to/production.md, Redis).
   */
  private async replicated(): Promise<void> {
    if (this.replicas === 0) return;
    const held = Number(await this.direct.call('WAIT', String(this.replicas), String(REPLICATED_WITHIN_MS)));
    if (held < this.replicas)
      throw new Error(
        `written but not replicated: ${held} of ${this.replicas} replicas had it within ${REPLICATED_WITHIN_MS} ms`,
      );
  }

  caughtUp(id: number): Promise<void> {
    if (id <= this.lastSeen) return Promise.resolve();
    return new Promise<void>((resolve) => this.waiters.push({ id, resolve }));
  }

  /**
   * The write connection's own state: it changes the moment Redis closes the connection, before
   * any write fails. A change refused for it is a failure health() reports, as a failed write is.
   */
  accepting(): boolean {
    if (this.direct.status === 'ready') return true;
    this.lastError ??= `connection ${this.direct.status}`;
    return false;
  }

  async answers(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>(
      (_resolve, reject) =>
        (timer = setTimeout(() => reject(new Error(`no answer to PING within ${timeoutMs} ms`)), timeoutMs)),
    );
    try {
      await Promise.race([this.direct.ping(), late]);
      this.unanswered = undefined;
      return true;
    } catch (error) {
      // Apart from a failed write's error: a PING answered does not mean writes succeed (a full Redis answers it).
      this.unanswered = error instanceof Error ? error.message : String(error);
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  health(): StoreHealth {
    const error = this.lastError ?? this.unanswered;
    return error === undefined
      ? { kind: 'redis', status: 'ok' }
      : { kind: 'redis', status: 'failing', last_error: error };
  }

  close(): void {
    this.closed = true;
    this.tail.disconnect();
    this.direct.disconnect();
    void this.flushing
      .catch(() => undefined)
      .then(() => this.redis.quit())
      .catch(() => undefined);
  }

  private async start(): Promise<void> {
    await Promise.all([this.redis.connect(), this.tail.connect(), this.direct.connect()]);
    const newest = this.parseEntries(
      await this.redis.call('XREVRANGE', this.key, '+', '-', 'COUNT', String(this.capacity)),
    ).items;
    newest.reverse();
    const last = Number((await this.redis.get(this.lastKey)) ?? '0');
    this.lastSeen = last;
    if (newest.length > 0) this.droppedThrough = Number(newest[0]!.id) - 1;
    else this.droppedThrough = last;
    this.held = newest;
    void this.follow();
  }

  private async flush(): Promise<void> {
    const batch = this.queue;
    if (batch.length === 0) return;
    this.queue = [];
    let highest = 0;
    try {
      // A Redis that keeps its connection open but does not answer (stopped) would run what was
      // sent once it is back, after its requests were refused: asked first, it is sent nothing
      // (unless it stops between its answer and the write: docs/explanation/cluster.md, Outages).
      if (this.refusalsLeaveNothing && !(await this.answers(PROBE_BEFORE_WRITE_MS))) throw new Error(this.unanswered);
      // On the connection with no offline queue and a bounded wait: a Redis that is gone or does not
      // answer refuses the commit at once or within 2 s, instead of holding its requests until it is back.
      const sent = this.direct.status === 'ready';
      const pipeline = this.direct.pipeline();
      for (const pending of batch)
        pipeline.appendOnce(
          this.key,
          this.lastKey,
          pending.writeKey,
          String(this.capacity),
          pending.json,
          String(DEDUPE_TTL_SECONDS),
        );
      const results = (await pipeline.exec()) ?? [];
      let ids = results.map(([, id]) => id);
      const failed = results.flatMap(([error]) => (error ? [error] : []));
      if (failed.length > 0 || results.length !== batch.length) {
        const cause = failed[0] ?? new Error('pipeline answered short');
        // Refused for certain: nothing sent, or every append answered an error. Otherwise, where a
        // refusal must leave nothing, the commit is in doubt until its keys are found
        // (docs/decisions/0047-a-write-in-doubt-is-not-a-refusal.md).
        const refused = !sent || (failed.length === batch.length && failed.every(isReplyError));
        if (refused || !this.refusalsLeaveNothing) throw cause;
        ids = await this.settle(
          batch.map((pending) => pending.writeKey),
          cause.message,
        );
      }
      for (const id of ids) highest = Math.max(highest, Number(id));
      try {
        await this.replicated();
      } catch (error) {
        if (!this.refusalsLeaveNothing) throw error;
        const message = error instanceof Error ? error.message : String(error);
        throw new StoreInDoubtError(`activity log: ${message}; ${MAY_HAVE_BEEN_APPLIED}`);
      }
    } catch (error) {
      // Every request waiting on this commit is refused (or told it is in doubt). In cluster mode what they wrote must not
      // appear with a later commit (their retries write their items anew); with embedded sessions,
      // which kept their change, the items go back at the front with the same write keys, and the
      // next commit writes only what did not land.
      if (!this.refusalsLeaveNothing) this.queue = [...batch, ...this.queue];
      this.lastError = error instanceof Error ? error.message : String(error);
      if (error instanceof StoreInDoubtError) throw error;
      throw new StoreUnavailableError(`activity log: ${this.lastError}`);
    }
    this.lastError = undefined;
    if (highest > this.lastSeen) await new Promise<void>((resolve) => this.waiters.push({ id: highest, resolve }));
  }

  private async follow(): Promise<void> {
    while (!this.closed) {
      let entries: { items: ActivityItem[]; through: number };
      try {
        const reply = await this.tail.call(
          'XREAD',
          'COUNT',
          String(TAIL_BATCH),
          'BLOCK',
          String(TAIL_BLOCK_MS),
          'STREAMS',
          this.key,
          streamId(this.lastSeen),
        );
        entries = this.parseEntries(reply === null ? [] : firstStreamEntries(reply));
      } catch (error) {
        if (this.closed) return;
        this.lastError = error instanceof Error ? error.message : String(error);
        await new Promise((resolve) => setTimeout(resolve, 200));
        continue;
      }
      for (const item of entries.items) this.record(item);
      // Past the entries skipped too: the next read starting at one would return it at once, and again.
      if (entries.through > this.lastSeen) this.lastSeen = entries.through;
      if (entries.through > 0) this.wake();
    }
  }

  /**
   * `[[id, ['item', json]], …]` to items, and the highest entry id read; an entry that is not
   * ours, or is not an item (damaged), is skipped: one entry must not fail every read.
   */
  private parseEntries(reply: unknown): { items: ActivityItem[]; through: number } {
    const items: ActivityItem[] = [];
    let through = 0;
    for (const entry of Array.isArray(reply) ? reply : []) {
      if (!Array.isArray(entry) || typeof entry[0] !== 'string') continue;
      const id = numericId(entry[0]);
      through = Math.max(through, id);
      if (!Array.isArray(entry[1])) continue;
      const fields = entry[1] as unknown[];
      if (fields[0] === 'erase') {
        this.forget(fields[1]);
        continue;
      }
      const json = fields[fields.indexOf('item') + 1];
      const item = typeof json === 'string' ? this.itemReader.read(id, json) : undefined;
      if (item) items.push(item);
    }
    return { items, through };
  }

  /** An erasure's marker: the ids it deleted leave what this process holds (`erase`). */
  private forget(ids: unknown): void {
    let erased: unknown;
    try {
      erased = typeof ids === 'string' ? JSON.parse(ids) : undefined;
    } catch {
      erased = undefined;
    }
    if (!Array.isArray(erased) || erased.length === 0) return;
    const gone = new Set(erased.map(String));
    this.held = this.held.filter((item) => !gone.has(item.id));
  }

  private record(item: ActivityItem): void {
    const id = Number(item.id);
    if (id <= this.lastSeen) return;
    this.lastSeen = id;
    this.held.push(item);
    if (this.held.length > this.capacity) {
      const dropped = this.held.splice(0, this.held.length - this.capacity);
      this.droppedThrough = Number(dropped[dropped.length - 1]!.id);
    }
    for (const listener of this.listeners) listener(item);
  }

  private wake(): void {
    const due = this.waiters.filter((waiter) => waiter.id <= this.lastSeen);
    if (due.length === 0) return;
    this.waiters = this.waiters.filter((waiter) => waiter.id > this.lastSeen);
    for (const waiter of due) waiter.resolve();
  }

  private firstAbove(afterId: number): number {
    let low = 0;
    let high = this.held.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (Number(this.held[mid]!.id) <= afterId) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

/** XREAD of one stream: `[[key, entries]]` over RESP2, `[key, entries]` (a flattened map) over RESP3. */
function firstStreamEntries(reply: unknown): unknown {
  if (!Array.isArray(reply)) return [];
  if (typeof reply[0] === 'string') return reply[1];
  return Array.isArray(reply[0]) ? (reply[0] as unknown[])[1] : [];
}
