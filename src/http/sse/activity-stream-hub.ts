import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { ActivityFeed } from '../../actors/activity-actor.js';
import type { ActivityItem, ActivityKind } from '../../domain/activity.js';
import type { AppClock } from '../../integrations/clock.js';
import type { ActivityLog } from '../../store/ports.js';
import type { ActivityStreamReset } from '../schemas/activity-stream.js';
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
  /** Unread bytes of all streams together: their share of MEMORY_BUDGET_MB (docs/limits.md). */
  maxTotalBufferBytes: number;
  heartbeatMs: number;
  retryMs: number;
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
  /** Bytes queued for all streams together: what slow readers cost in memory. */
  bufferedBytes: number;
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
}

/** Items read from the ring per step of a replay; the replay pauses on the socket's drain between frames. */
const REPLAY_BATCH = 256;
const HEARTBEAT = sseComment('heartbeat');

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
   * seen, so it can only be high: counted afresh at each item and heartbeat, which are every write
   * but a catch-up's, it is never far from the truth.
   */
  private queuedBytes = 0;

  constructor(private readonly options: ActivityStreamHubOptions) {}

  open(res: ServerResponse, request: StreamRequest): OpenResult {
    // The client can leave while the middleware runs; its 'close' has then fired already, and a
    // stream opened now would never be removed.
    if (res.destroyed) return { ok: false, reason: 'gone' };
    if (this.closed) return { ok: false, reason: 'closed' };
    if (this.streams.size >= this.options.maxStreams) return { ok: false, reason: 'capacity' };

    const out = new SseResponse(res, this.options.maxBufferBytes);
    out.start(this.options.retryMs);
    const { sessionId, kind } = request;
    const stream: OpenStream = {
      out,
      matches: (item) => (sessionId === undefined || item.session_id === sessionId) && (kind === undefined || item.kind === kind),
      cursor: this.options.activity.bounds().lastId,
      live: true,
      sent: 0,
      openedAt: this.options.clock.now(),
      log: this.options.logger.child({ request_id: request.requestId, stream: 'activity' }),
    };
    this.streams.add(stream);
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
    for (const stream of this.streams) bufferedBytes += stream.out.bufferedBytes;
    return {
      streams: this.streams.size,
      subscribed: this.subscription !== undefined,
      heartbeatArmed: this.heartbeat !== undefined,
      bufferedBytes,
    };
  }

  private resume(stream: OpenStream, afterId: number): void {
    const { oldestId, lastId } = this.options.activity.bounds();
    stream.live = false;
    stream.cursor = afterId;
    if (afterId > lastId) {
      // Ids never repeat across restarts, so an id above the newest was never given by this log.
      // Not repeated: an id never given out is any number the client chose, an identity value included.
      const reset = resetFrame({ reason: 'unknown_id', requested_after: null, oldest_id: idOrNull(oldestId), latest_id: String(lastId) });
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
      const reset = resetFrame({ reason: 'behind_buffer', requested_after: String(stream.cursor), oldest_id: items[0]!.id, latest_id: String(lastId) });
      if (!this.send(stream, reset)) return;
    }
    if (items.length === 0) {
      stream.live = true;
      return;
    }
    for (const item of items) {
      stream.cursor = Number(item.id);
      if (!stream.matches(item)) continue;
      const sent = this.send(stream, messageFrame(item));
      if (!sent) return;
      stream.sent += 1;
      if (sent === 'full') {
        stream.out.whenDrained(() => this.catchUp(stream));
        return;
      }
    }
    setImmediate(() => this.catchUp(stream));
  }

  private onRecorded(item: ActivityItem): void {
    const id = Number(item.id);
    let frame: Buffer | undefined;
    this.recount();
    for (const stream of this.streams) {
      if (!stream.live || id <= stream.cursor) continue;
      stream.cursor = id;
      if (!stream.matches(item)) continue;
      frame ??= messageFrame(item);
      // Live writes are not paced: the cap in `send` bounds what a slow reader can queue.
      if (this.send(stream, frame)) stream.sent += 1;
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
    if (this.queuedBytes + bytes <= this.options.maxTotalBufferBytes) return;
    this.recount();
    while (this.queuedBytes + bytes > this.options.maxTotalBufferBytes) {
      let slowest: OpenStream | undefined;
      for (const stream of this.streams) if (!slowest || stream.out.bufferedBytes > slowest.out.bufferedBytes) slowest = stream;
      const unread = slowest?.out.bufferedBytes ?? 0;
      if (!slowest || unread === 0) return;
      slowest.out.cut();
      this.queuedBytes -= unread;
      this.remove(slowest, 'over_budget');
    }
  }

  private remove(stream: OpenStream, reason: CloseReason): void {
    if (!this.streams.delete(stream)) return;
    stream.out.cancelDrain();
    const seconds = Math.round((this.options.clock.now() - stream.openedAt) / 1000);
    const details = { reason, sent: stream.sent, seconds, open_streams: this.streams.size };
    if (reason === 'slow_consumer') stream.log.warn({ ...details, max_buffer_bytes: this.options.maxBufferBytes }, 'activity stream cut: client not reading');
    else if (reason === 'over_budget') stream.log.warn({ ...details, max_total_buffer_bytes: this.options.maxTotalBufferBytes }, 'activity stream cut: slowest reader with all streams at their memory budget');
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
      this.recount();
      for (const stream of this.streams) this.send(stream, HEARTBEAT);
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
