import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { kib } from '../domain/log-figures.js';
import type { AppClock } from '../integrations/clock.js';

/**
 * The request bodies still arriving, charged to their share of MEMORY_BUDGET_MB
 * (docs/reference/limits.md, "Request bodies"; docs/decisions/0027-every-held-byte-charged.md).
 *
 * A body is kept in memory until its last byte arrives, and a client decides how long that takes
 * (up to REQUEST_TIMEOUT_SECONDS). Uncounted, thousands of connections that each sent all but the
 * last bytes of a large body, then a byte every few seconds, took RSS past the whole budget
 * (docs/reference/limits.md). So a body is charged what it announced (its Content-Length, at most the body
 * limit) when its reading starts, or each chunk as it arrives when it announced nothing, and
 * released when it is read, refused or gone. A charge that does not fit cuts the bodies that have
 * been arriving longest, keyed or not, until it does: an honest body arrives in milliseconds, so
 * under such a flood the bodies cut are the trickled ones, and the newcomer is served. Only when
 * every body left is younger than the newcomer's own is the newcomer refused.
 */
export interface BodyLine {
  /** Bytes charged for this body. */
  charged: number;
  readonly startedAt: number;
  readonly req: IncomingMessage;
  /** Oldest first: a list, not a Map, so a request adds no Map churn (docs/decisions/0014-nothing-outlives-the-young-generation.md). */
  prev: BodyLine | undefined;
  next: BodyLine | undefined;
  open: boolean;
}

export interface RequestBodiesUse {
  budget_bytes: number;
  used_bytes: number;
  bodies: number;
  /** Bodies cut since the process started to make room for newer ones. */
  cut: number;
}

/** How often a run of cuts is logged, at most: a flood cuts thousands. */
const CUT_LOG_INTERVAL_MS = 10_000;

/**
 * The requests whose bodies were cut to make room: each is counted in the cut line, so the
 * request log leaves them out (middleware/request-log.ts). One line each cost a slow-body flood
 * about a second of the event loop in six while its connections came in
 * (docs/reference/limits.md, "What a cut connection costs").
 */
const cutRequests = new WeakSet<IncomingMessage>();

/** Whether the service cut this request's body to make room for newer ones. */
export const wasCut = (req: IncomingMessage): boolean => cutRequests.has(req);

export class RequestBodies {
  private head: BodyLine | undefined;
  private tail: BodyLine | undefined;
  private used = 0;
  private count = 0;
  private cuts = 0;
  private cutsLogged = 0;
  private lastCutLog = Number.NEGATIVE_INFINITY;
  /** The line that tells the cuts made since the last one, once the interval has passed. */
  private pendingCutLog: unknown;

  constructor(
    readonly budgetBytes: number,
    private readonly clock: AppClock,
    private readonly logger: Logger,
  ) {}

  /**
   * A body starts to be read: charged what it announced (at most `limit`), or `reserve` when what
   * it holds may differ from what it announced (a compressed body), or nothing yet when it
   * announced nothing. Undefined when there is no room for it even after the older bodies are
   * cut: the caller refuses it.
   */
  open(req: IncomingMessage, limit: number, reserve?: number): BodyLine | undefined {
    const declared = Number(req.headers['content-length']);
    const announced = reserve ?? (Number.isFinite(declared) && declared > 0 ? Math.min(declared, limit) : 0);
    const line: BodyLine = {
      charged: 0,
      startedAt: this.clock.now(),
      req,
      prev: this.tail,
      next: undefined,
      open: true,
    };
    if (this.tail) this.tail.next = line;
    else this.head = line;
    this.tail = line;
    this.count += 1;
    if (announced > 0 && !this.charge(line, announced)) return undefined;
    return line;
  }

  /**
   * `bytes` more of the body arrived; a body charged what it announced is charged again only past
   * it. False when they do not fit even after the older bodies are cut: the line is closed, and
   * the caller refuses the body.
   */
  arrived(line: BodyLine, received: number): boolean {
    if (!line.open) return false;
    return received <= line.charged || this.charge(line, received - line.charged);
  }

  /** The body was read, refused or abandoned: its bytes leave the share. Idempotent. */
  close(line: BodyLine): void {
    if (!line.open) return;
    line.open = false;
    this.used -= line.charged;
    line.charged = 0;
    this.count -= 1;
    if (line.prev) line.prev.next = line.next;
    else this.head = line.next;
    if (line.next) line.next.prev = line.prev;
    else this.tail = line.prev;
    line.prev = undefined;
    line.next = undefined;
  }

  use(): RequestBodiesUse {
    return { budget_bytes: this.budgetBytes, used_bytes: this.used, bodies: this.count, cut: this.cuts };
  }

  private charge(line: BodyLine, bytes: number): boolean {
    while (this.used + bytes > this.budgetBytes) {
      const oldest = this.head;
      // Only bodies that started before this one give way to it: the newest body is the one refused.
      if (oldest === undefined || oldest === line || oldest.startedAt > line.startedAt) {
        this.close(line);
        return false;
      }
      this.cut(oldest);
    }
    this.used += bytes;
    line.charged += bytes;
    return true;
  }

  /** Ends the connection of a body that has been arriving longest: its client gets nothing more from it. */
  private cut(line: BodyLine): void {
    this.close(line);
    this.cuts += 1;
    cutRequests.add(line.req);
    line.req.socket.destroy();
    const now = this.clock.now();
    const wait = this.lastCutLog + CUT_LOG_INTERVAL_MS - now;
    if (wait <= 0) return this.logCuts(now - line.startedAt);
    // The cuts of this interval are told when it ends: none goes untold when the flood stops.
    this.pendingCutLog ??= this.clock.setTimeout(() => {
      this.pendingCutLog = undefined;
      if (this.cuts > this.cutsLogged) this.logCuts(undefined);
    }, wait);
  }

  private logCuts(oldestMs: number | undefined): void {
    this.logger.warn(
      {
        cut_count: this.cuts - this.cutsLogged,
        budget_kib: kib(this.budgetBytes),
        ...(oldestMs === undefined ? {} : { oldest_seconds: Math.round(oldestMs / 1000) }),
      },
      'request bodies cut: the bodies arriving longest, with all bodies at their memory budget',
    );
    this.lastCutLog = this.clock.now();
    this.cutsLogged = this.cuts;
  }
}
