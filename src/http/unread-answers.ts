import type { Socket } from 'node:net';
import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { kib } from '../domain/log-figures.js';
import type { KernelSendQueues } from '../integrations/kernel-send-queues.js';
import { NO_KERNEL_QUEUES, connectionKey } from '../integrations/kernel-send-queues.js';

/** How often the kernel's part is read for the connections that hold anything there. */
const KERNEL_CHECK_MS = 1_000;

/**
 * What this machine holds of answers their clients have not read, across every request
 * connection, held to a share of MEMORY_BUDGET_MB (docs/reference/limits.md, "Answers not read").
 * MAX_CONNECTIONS connections, each asking for activity pages and reading nothing, would otherwise
 * hold gigabytes. When the total passes the share, the connections holding the most are cut, the
 * slowest reader first, as the activity streams do with theirs (src/http/sse/activity-stream-hub.ts).
 *
 * A connection holds two parts. Node's: what its socket has queued, and the answers ended
 * behind it (node hands a pipelined answer to the socket only once the one before it has gone, so
 * up to MAX_PIPELINED wait in their own buffers), each counted when it ends, learnt by wrapping
 * `res.end` (as the `compression` middleware learns of a body). The kernel's: what it took of
 * the connection's answers and its client has not acknowledged, a few megabytes at most per
 * connection, read from /proc about once a second (src/integrations/kernel-send-queues.ts), as the
 * streams count theirs (docs/decisions/0027-every-held-byte-charged.md). Following every
 * connection's kernel queue would cost each answer a reading; instead each check looks up the few
 * connections the reading names, among those that have answered, so the usual answer costs its
 * connection's count of open answers kept (below) and nothing more.
 */
export class UnreadAnswers {
  /** Per connection holding anything: its count, and its ended answers not yet handed to it. */
  private readonly held = new Map<Socket, { bytes: number; waiting: Set<Response> }>();
  /** Every open connection that has ended an answer, by its key in the kernel's reading. */
  private readonly answered = new Map<number, Socket>();
  private readonly watched = new WeakSet<Socket>();
  /**
   * Answers begun and not ended, per connection. The kernel's part of a connection with one open
   * is not counted here: it may be an activity stream's, which the stream counts itself
   * (src/http/sse/activity-stream-hub.ts) on a keep-alive connection that answered before.
   */
  private readonly open = new WeakMap<Socket, number>();
  private total = 0;
  private cutCount = 0;
  private checks: NodeJS.Timeout | undefined;

  constructor(
    private readonly budgetBytes: number,
    private readonly logger: Logger,
    private readonly kernel: KernelSendQueues = NO_KERNEL_QUEUES,
  ) {}

  /** Express middleware: counts each answer from when it ends until its client has it all. */
  readonly track: RequestHandler = (req, res, next) => {
    const socket = req.socket;
    this.open.set(socket, (this.open.get(socket) ?? 0) + 1);
    let ending = false;
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    res.end = ((...args: unknown[]) => {
      const result = end(...args);
      if (ending) return result;
      ending = true;
      this.open.set(socket, (this.open.get(socket) ?? 1) - 1);
      this.ended(req, res);
      return result;
    }) as Response['end'];
    next();
  };

  /** Bytes counted now, the connections holding them, and connections cut since start. */
  stats(): { bytes: number; connections: number; cut: number } {
    return { bytes: this.total, connections: this.held.size, cut: this.cutCount };
  }

  private ended(req: Request, res: Response): void {
    const socket = req.socket;
    if (socket.destroyed) return;
    this.watch(socket);
    // The usual case, an answer handed to its socket and taken whole by the kernel: nothing held
    // in node; the kernel's part, if its client does not read it, is found by the next check.
    if (res.socket !== null && socket.writableLength === 0 && !this.held.has(socket)) return;
    const entry = this.entry(socket);
    if (!res.writableFinished) {
      entry.waiting.add(res);
      res.once('finish', () => this.leave(socket, res));
      res.once('close', () => this.leave(socket, res));
    }
    this.recount(socket);
    if (this.total > this.budgetBytes) this.makeRoom();
  }

  /** Once per connection: known by its key to the checks, recounted as it drains, forgotten as it closes. */
  private watch(socket: Socket): void {
    if (this.watched.has(socket)) return;
    this.watched.add(socket);
    const key = connectionKey(socket);
    if (key !== undefined) this.answered.set(key, socket);
    socket.on('drain', () => this.recount(socket));
    socket.once('close', () => {
      this.forget(socket);
      if (key !== undefined && this.answered.get(key) === socket) this.answered.delete(key);
    });
    if (this.checks === undefined) {
      this.checks = setInterval(this.check, KERNEL_CHECK_MS);
      this.checks.unref();
    }
  }

  private entry(socket: Socket): { bytes: number; waiting: Set<Response> } {
    let entry = this.held.get(socket);
    if (!entry) {
      entry = { bytes: 0, waiting: new Set() };
      this.held.set(socket, entry);
    }
    return entry;
  }

  /**
   * About once a second: the connections the kernel's reading names as holding anything are
   * followed, those followed are recounted, and if all together pass the share the ones holding
   * the most are cut. Stops when no connection that answered is open.
   */
  private readonly check = (): void => {
    if (this.answered.size === 0) {
      clearInterval(this.checks);
      this.checks = undefined;
      return;
    }
    for (const key of this.kernel.queued().keys()) {
      const socket = this.answered.get(key);
      if (socket && !socket.destroyed) this.entry(socket);
    }
    for (const socket of [...this.held.keys()]) this.recount(socket);
    if (this.total > this.budgetBytes) this.makeRoom();
  };

  private leave(socket: Socket, res: Response): void {
    this.held.get(socket)?.waiting.delete(res);
    this.recount(socket);
  }

  /** What `socket` holds now: the kernel's part, its queue, and the answers waiting for it that it does not hold yet. */
  private recount(socket: Socket): void {
    const entry = this.held.get(socket);
    if (!entry) return;
    const kernelPart = (this.open.get(socket) ?? 0) > 0 ? 0 : this.kernel.of(socket);
    let bytes = socket.destroyed ? 0 : socket.writableLength + kernelPart;
    // An answer handed to the socket counts in the socket's queue (its own writableLength adds it again).
    for (const res of entry.waiting) if (res.socket === null) bytes += res.writableLength;
    this.total += bytes - entry.bytes;
    entry.bytes = bytes;
    if (bytes === 0 && entry.waiting.size === 0) this.held.delete(socket);
  }

  private forget(socket: Socket): void {
    const entry = this.held.get(socket);
    if (!entry) return;
    this.held.delete(socket);
    this.total -= entry.bytes;
  }

  /** Reads every count afresh, then cuts the connections holding the most until the total is within the share. */
  private makeRoom(): void {
    for (const socket of [...this.held.keys()]) this.recount(socket);
    if (this.total <= this.budgetBytes) return;
    let cut = 0;
    for (const [socket] of [...this.held].sort((a, b) => b[1].bytes - a[1].bytes)) {
      if (this.total <= this.budgetBytes) break;
      this.forget(socket);
      socket.destroy();
      cut += 1;
    }
    this.cutCount += cut;
    this.logger.warn(
      { cut_count: cut, unread_kib: kib(this.total), max_total_unread_kib: kib(this.budgetBytes) },
      'answers cut: the clients holding the most unread, with all unread answers at their memory budget',
    );
  }
}
