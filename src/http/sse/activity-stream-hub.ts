import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { kib } from '../../domain/log-figures.js';
import type { ActivityFeed } from '../../actor-system/activity-actor.js';
import type { ActivityItem, ActivityKind } from '../../domain/activity.js';
import type { AppClock } from '../../integrations/clock.js';
import type { KernelSendQueues } from '../../integrations/kernel-send-queues.js';
import type { ActivityLog } from '../../store/ports.js';
import type { ActivityStreamReset } from '../schemas/activity-stream.schema.js';
import { sseComment, sseMessage } from './sse-frame.js';
import type { SendResult } from './sse-response.js';
import { SseResponse } from './sse-response.js';

export interface ActivityStreamHubOptions {
  /** Reads and resumes: what the log holds. */
  activity: ActivityLog;
  /** Live items: the activity actor. */
  live: ActivityFeed;
  clock: AppClock;
  logger: Logger;
  maxStreams: number;
  maxBufferBytes: number;
  /** Unread bytes of all streams together: their share of MEMORY_BUDGET_MB (docs/reference/limits.md). */
  maxTotalBufferBytes: number;
  heartbeatMs: number;
  retryMs: number;
  /** What the kernel holds unacknowledged per connection: counted with each stream's unread bytes. */
  kernel: KernelSendQueues;
  /** Writes to streams in one event-loop turn, all streams together (WRITES_PER_TURN unless a test says). */
  writesPerTurn?: number;
}

export interface StreamRequest {
  sessionId?: string | undefined;
  kind?: ActivityKind | undefined;
  /** From `Last-Event-ID`: resume after this item. */
  afterId?: number | undefined;
  requestId: string;
}

/** `gone`: the client left before the stream could open; there is no one to answer. */
export type OpenResult = { ok: true } | { ok: false; reason: 'capacity' | 'closed' | 'gone' };

/** `over_budget`: the slowest reader when all streams' unread bytes reached their budget. */
export type CloseReason = 'client_closed' | 'slow_consumer' | 'over_budget' | 'shutdown' | 'write_failed';

export interface HubStats {
  streams: number;
  /** Whether the hub is attached to the activity actor as a reader. */
  subscribed: boolean;
  heartbeatArmed: boolean;
  /** Bytes unread for all streams together, node's and the kernel's: what slow readers cost in memory. */
  bufferedBytes: number;
  /** The kernel's part of bufferedBytes. */
  kernelBytes: number;
  /** Writes still to make: items and heartbeats not yet written to every stream they go to. */
  pendingFanouts: number;
}

interface OpenStream {
  out: SseResponse;
  matches: (item: ActivityItem) => boolean;
  /** Id of the last item this stream has dealt with (sent, or skipped by its filter). */
  cursor: number;
  /** false while catching up from the ring at the client's pace; live items are then read from the ring. */
  live: boolean;
  sent: number;
  openedAt: number;
  log: Logger;
  /** Its catch-up, resumed (one function per stream, so a wait for the next turn is kept once). */
  resume: () => void;
}

/** Items read from the ring per step of a replay; the replay pauses on the socket's drain between frames. */
const REPLAY_BATCH = 256;
const HEARTBEAT = sseComment('heartbeat');
/**
 * Writes to streams per event-loop turn, all streams together; the rest wait for the next turn.
 * Each is a system call while the kernel takes more: an item written to thousands of streams at
 * once made long turns under an event flood, and new connections waited in a full accept queue
 * (docs/decisions/0027-every-held-byte-charged.md).
 */
export const WRITES_PER_TURN = 200;
/**
 * Items and heartbeats waiting to be written: past this, the streams still behind catch up from
 * the ring at their own pace instead, so what waits is bounded whatever the rate of events.
 */
const MAX_PENDING_FANOUTS = 256;

/** An item (or a heartbeat) still to be written to the streams that were live when it came. */
interface Pending {
  /** The item's id, or undefined for a heartbeat (no cursor, no filter). */
  id: number | undefined;
  item: ActivityItem | undefined;
  frame: Buffer | undefined;
}

/** A pass over the streams writing them the first `size` pending items, a turn's writes at a time. */
interface Round {
  /** The streams when it began: the hub's list then (copied on change, never mutated). */
  targets: readonly OpenStream[];
  next: number;
  size: number;
}

/**
 * Owns every open activity stream. One reader attached to the activity actor serves them all:
 * each item is serialized once and the same bytes are written to every stream that wants it,
 * so a thousand clients cost one JSON.stringify per item, and the actor's reader list does not
 * grow with the audience. The subscription and the one heartbeat timer exist only while a
 * stream is open.
 *
 * A stream is live (items written as they are recorded) or catching up (reading the ring from
 * its cursor, a batch at a time, waiting for the socket to drain). Resume and reset are the
 * catch-up path; the ring itself is the replay buffer, so the hub keeps no queue per client.
 */
export class ActivityStreamHub {
  private readonly streams = new Set<OpenStream>();
  private subscription: { unsubscribe(): void } | undefined;
  private heartbeat: unknown;
  private closed = false;
  /**
   * Unread bytes of all streams, as of the last count plus what was written since. Drains are not
   * seen, so it can only be high (the kernel's part can lag its reading by a second): counted
   * afresh at each pass over the streams and whenever it would pass the budget, it is never far
   * from the truth.
   */
  private queuedBytes = 0;
  /** The streams in the order written to; replaced, never changed, when one opens or closes, so a fan-out under way keeps its own. */
  private order: readonly OpenStream[] = [];
  private orderStale = false;
  private readonly pending: Pending[] = [];
  private round: Round | undefined;
  /** Writes left in this turn; reset at the next turn by `turn`. */
  private writesLeft: number;
  private readonly writesPerTurn: number;
  private turn: NodeJS.Immediate | undefined;
  /** Work that found this turn's writes spent, run in order at the next. */
  private readonly waiting = new Set<() => void>();
  private readonly pump = () => this.writePending();

  constructor(private readonly options: ActivityStreamHubOptions) {
    this.writesPerTurn = options.writesPerTurn ?? WRITES_PER_TURN;
    this.writesLeft = this.writesPerTurn;
  }

  open(res: ServerResponse, request: StreamRequest): OpenResult {
    // The client can leave while the middleware runs; its 'close' has then fired already, and a
    // stream opened now would never be removed.
    if (res.destroyed) return { ok: false, reason: 'gone' };
    if (this.closed) return { ok: false, reason: 'closed' };
    if (this.streams.size >= this.options.maxStreams) return { ok: false, reason: 'capacity' };

    const out = new SseResponse(res, this.options.maxBufferBytes, this.options.kernel);
    out.start(this.options.retryMs);
    const { sessionId, kind } = request;
    const stream: OpenStream = {
      out,
      matches: (item) =>
        (sessionId === undefined || item.session_id === sessionId) && (kind === undefined || item.kind === kind),
      cursor: this.options.activity.bounds().lastId,
      live: true,
      sent: 0,
      openedAt: this.options.clock.now(),
      log: this.options.logger.child({ request_id: request.requestId, stream: 'activity' }),
      resume: () => this.catchUp(stream),
    };
    this.streams.add(stream);
    this.orderStale = true;
    out.onClose(() => this.remove(stream, 'client_closed'));
    this.ensureRunning();
    stream.log.info(
      { session_id: sessionId, kind, last_event_id: request.afterId, open_streams: this.streams.size },
      'activity stream opened',
    );
    if (request.afterId !== undefined) this.resume(stream, request.afterId);
    return { ok: true };
  }

  /** Ends every stream cleanly and refuses new ones (shutdown). */
  closeAll(): void {
    this.closed = true;
    for (const stream of [...this.streams]) {
      stream.out.end();
      this.remove(stream, 'shutdown');
    }
  }

  stats(): HubStats {
    let bufferedBytes = 0;
    let kernelBytes = 0;
    for (const stream of this.streams) {
      bufferedBytes += stream.out.bufferedBytes;
      kernelBytes += stream.out.kernelBytes;
    }
    return {
      streams: this.streams.size,
      subscribed: this.subscription !== undefined,
      heartbeatArmed: this.heartbeat !== undefined,
      bufferedBytes,
      kernelBytes,
      pendingFanouts: this.pending.length,
    };
  }

  /** Whether a write fits in this turn; when not, `work` runs at the next (once, however often it asks). */
  private mayWrite(work: () => void): boolean {
    if (this.writesLeft > 0) return true;
    this.waiting.add(work);
    this.armTurn();
    return false;
  }

  private wrote(): void {
    this.writesLeft -= 1;
    this.armTurn();
  }

  /** The next turn gives the writes back and runs what waited for them. */
  private armTurn(): void {
    this.turn ??= setImmediate(() => {
      this.turn = undefined;
      this.writesLeft = this.writesPerTurn;
      const work = [...this.waiting];
      this.waiting.clear();
      for (const run of work) run();
    });
  }

  private resume(stream: OpenStream, afterId: number): void {
    const { oldestId, lastId } = this.options.activity.bounds();
    stream.live = false;
    stream.out.kernelCounted = false;
    stream.cursor = afterId;
    if (afterId > lastId) {
      // Ids never repeat across restarts, so an id above the newest was never given by this log.
      // Not repeated: an id never given out is any number the client chose, an identity value included.
      const reset = resetFrame({
        reason: 'unknown_id',
        requested_after: null,
        oldest_id: idOrNull(oldestId),
        latest_id: String(lastId),
      });
      if (!this.send(stream, reset)) return;
      stream.cursor = oldestId === undefined ? lastId : oldestId - 1;
    }
    this.catchUp(stream);
  }

  /**
   * Writes from the ring until the stream is level with the newest item, pausing whenever the
   * socket is full, and giving the event loop back between batches: a filter that matches nothing
   * never fills the socket, and a replay of a whole log in one turn would stall every request.
   */
  private catchUp(stream: OpenStream): void {
    if (stream.live || !this.streams.has(stream)) return;
    const { items, gap } = this.options.activity.after(stream.cursor, REPLAY_BATCH);
    if (gap) {
      const { lastId } = this.options.activity.bounds();
      const reset = resetFrame({
        reason: 'behind_buffer',
        requested_after: String(stream.cursor),
        oldest_id: items[0]!.id,
        latest_id: String(lastId),
      });
      if (!this.send(stream, reset)) return;
    }
    if (items.length === 0) {
      stream.live = true;
      stream.out.kernelCounted = true;
      return;
    }
    const resume = stream.resume;
    for (const item of items) {
      if (!this.mayWrite(resume)) return;
      stream.cursor = Number(item.id);
      if (!stream.matches(item)) continue;
      const sent = this.send(stream, messageFrame(item));
      this.wrote();
      if (!sent) return;
      stream.sent += 1;
      if (sent === 'full') {
        stream.out.whenDrained(resume);
        return;
      }
    }
    this.waiting.add(resume);
    this.armTurn();
  }

  private onRecorded(item: ActivityItem): void {
    this.fanOut({ id: Number(item.id), item, frame: undefined });
  }

  /** The streams as a list a fan-out keeps: made again only after one opened or closed, so a burst of closes costs one copy. */
  private currentOrder(): readonly OpenStream[] {
    if (this.orderStale) {
      this.order = [...this.streams];
      this.orderStale = false;
    }
    return this.order;
  }

  private fanOut(pending: Pending): void {
    this.pending.push(pending);
    if (this.pending.length > MAX_PENDING_FANOUTS) this.fallBehind();
    this.writePending();
  }

  /**
   * Writes what is pending in order, a turn's writes at a time: each stream gets items in the order
   * recorded, and the event loop gets back to accepting connections between turns.
   */
  private writePending(): void {
    while (this.pending.length > 0) {
      if (this.round === undefined) {
        // Counted afresh once a pass, not once an item: a count is a look at every stream.
        this.recount();
        this.round = { targets: this.currentOrder(), next: 0, size: this.pending.length };
      }
      const round = this.round;
      while (round.next < round.targets.length) {
        if (!this.mayWrite(this.pump)) return;
        const stream = round.targets[round.next]!;
        round.next += 1;
        if (this.streams.has(stream) && this.deliver(stream, round.size)) this.wrote();
      }
      this.pending.splice(0, round.size);
      this.round = undefined;
    }
  }

  /**
   * Writes the stream what is its of the first `count` pending items, corked: one system call
   * however many there are, where a write per item made the turns of a flood. True if it wrote.
   */
  private deliver(stream: OpenStream, count: number): boolean {
    let wrote = false;
    stream.out.cork();
    try {
      for (let i = 0; i < count && this.streams.has(stream); i += 1) {
        const pending = this.pending[i]!;
        const { id, item } = pending;
        if (id !== undefined && item !== undefined) {
          if (!stream.live || id <= stream.cursor) continue;
          stream.cursor = id;
          if (!stream.matches(item)) continue;
          pending.frame ??= messageFrame(item);
        }
        if (this.send(stream, pending.frame ?? HEARTBEAT)) {
          wrote = true;
          if (id !== undefined) stream.sent += 1;
        }
      }
    } finally {
      stream.out.uncork();
    }
    return wrote;
  }

  /**
   * More is pending than the writes per turn keep up with: the items pending are dropped, and
   * every live stream not yet level with the newest item reads the rest from the ring at its own
   * pace (the catch-up path, paced by the same writes per turn). Heartbeats pending are dropped:
   * a stream that falls behind gets items instead.
   */
  private fallBehind(): void {
    const newest = this.pending.findLast((pending) => pending.id !== undefined)?.id;
    this.pending.length = 0;
    this.round = undefined;
    if (newest === undefined) return;
    for (const stream of this.streams) {
      if (!stream.live || stream.cursor >= newest) continue;
      stream.live = false;
      stream.out.kernelCounted = false;
      this.catchUp(stream);
    }
  }

  /** `sent` or `full` once written; false when the stream is gone (and no longer in the hub). */
  private send(stream: OpenStream, frame: Buffer): 'sent' | 'full' | false {
    this.makeRoom(frame.length);
    if (!this.streams.has(stream)) return false;
    let result: SendResult;
    try {
      result = stream.out.send(frame);
      if (result === 'sent' || result === 'full') this.queuedBytes += frame.length;
    } catch (error) {
      // Never let one broken socket throw into the activity actor's delivery loop.
      stream.log.error({ err: error }, 'activity stream write failed');
      stream.out.cut();
      this.remove(stream, 'write_failed');
      return false;
    }
    if (result === 'sent' || result === 'full') return result;
    this.remove(stream, result === 'cut' ? 'slow_consumer' : 'client_closed');
    return false;
  }

  private recount(): void {
    let queued = 0;
    for (const stream of this.streams) queued += stream.out.bufferedBytes;
    this.queuedBytes = queued;
  }

  /**
   * Before `bytes` more are queued: while all streams' unread bytes would pass their budget, the
   * stream with the most unread (the slowest reader) is cut. So streams never hold more than
   * their share of MEMORY_BUDGET_MB together, however many stop reading, and a reader that keeps
   * up is not cut for the ones that do not.
   */
  private makeRoom(bytes: number): void {
    const budget = this.options.maxTotalBufferBytes;
    if (this.queuedBytes + bytes <= budget) return;
    this.recount();
    if (this.queuedBytes + bytes <= budget) return;
    // Sorted once, slowest first: when the kernel's reading shows every stalled reader at once,
    // a scan for the slowest per cut made it thousands of scans of thousands of streams in one turn.
    const unread = [...this.streams]
      .map((stream) => ({ stream, bytes: stream.out.bufferedBytes }))
      .sort((a, b) => b.bytes - a.bytes);
    // Down to nine tenths: left at the brim, every write after would count all streams again.
    const target = budget * 0.9;
    let cut = 0;
    for (const { stream, bytes: held } of unread) {
      if (this.queuedBytes + bytes <= target || held === 0) break;
      stream.out.cut();
      this.queuedBytes -= held;
      this.remove(stream, 'over_budget');
      cut += 1;
    }
    if (cut > 0) {
      this.options.logger.warn(
        { cut_count: cut, open_count: this.streams.size, max_total_buffer_kib: kib(budget) },
        'activity stream cut: slowest reader with all streams at their memory budget',
      );
    }
  }

  private remove(stream: OpenStream, reason: CloseReason): void {
    if (!this.streams.delete(stream)) return;
    this.orderStale = true;
    this.waiting.delete(stream.resume);
    stream.out.cancelDrain();
    const seconds = Math.round((this.options.clock.now() - stream.openedAt) / 1000);
    const details = { reason, sent: stream.sent, seconds, open_streams: this.streams.size };
    if (reason === 'slow_consumer')
      stream.log.warn(
        { ...details, ...stream.out.unreadWhenCut, max_buffer_bytes: this.options.maxBufferBytes },
        'activity stream cut: client not reading',
      );
    // Cut over the budget: one line for all cut together (makeRoom).
    else if (reason === 'over_budget') stream.log.debug(details, "activity stream cut over the streams' budget");
    else stream.log.info(details, 'activity stream closed');
    if (this.streams.size === 0) this.stopRunning();
  }

  private ensureRunning(): void {
    this.subscription ??= this.options.live.subscribe('sse', (item) => this.onRecorded(item));
    if (this.heartbeat === undefined) this.armHeartbeat();
  }

  private stopRunning(): void {
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    if (this.heartbeat !== undefined) this.options.clock.clearTimeout(this.heartbeat);
    this.heartbeat = undefined;
  }

  /** One timer for all streams: a comment every interval keeps idle proxies from closing them. */
  private armHeartbeat(): void {
    this.heartbeat = this.options.clock.setTimeout(() => {
      this.heartbeat = undefined;
      this.fanOut({ id: undefined, item: undefined, frame: HEARTBEAT });
      if (this.streams.size > 0) this.armHeartbeat();
    }, this.options.heartbeatMs);
  }
}

function messageFrame(item: ActivityItem): Buffer {
  return sseMessage({ id: item.id, event: 'activity', data: JSON.stringify(item) });
}

function resetFrame(reset: ActivityStreamReset): Buffer {
  return sseMessage({ event: 'reset', data: JSON.stringify(reset) });
}

function idOrNull(id: number | undefined): string | null {
  return id === undefined ? null : String(id);
}
