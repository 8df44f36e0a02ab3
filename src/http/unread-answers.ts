import type { Socket } from 'node:net';
import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { kib } from '../domain/log-figures.js';

/**
 * What node holds of answers their clients have not read, across every request connection, held
 * to a share of MEMORY_BUDGET_MB (docs/reference/limits.md, "Answers not read"). MAX_CONNECTIONS
 * connections, each asking for activity pages and reading nothing, would otherwise hold
 * gigabytes. When the total passes the share, the connections holding the most are cut, the
 * slowest reader first, as the activity streams do with theirs (src/http/sse/activity-stream-hub.ts).
 *
 * A connection holds what its socket has queued (the kernel took the rest) and the answers ended
 * behind it: node hands a pipelined answer to the socket only once the one before it has gone,
 * so up to MAX_PIPELINED wait in their own buffers. Each is counted when it ends, learnt by
 * wrapping `res.end` (as the `compression` middleware learns of a body); counts are read again when an
 * answer leaves for the socket, when the socket drains, and before anyone is cut. Unlike the
 * streams' (docs/decisions/0027-every-held-byte-charged.md), the kernel's send queue is not
 * counted: an answer the kernel took whole is not followed at all, so that an answer costs the
 * usual request nothing (docs/reference/limits.md, "Answers not read", says what that leaves).
 */
export class UnreadAnswers {
  /** Per connection holding anything: its count, and its ended answers not yet handed to it. */
  private readonly held = new Map<Socket, { bytes: number; waiting: Set<Response> }>();
  private readonly watched = new WeakSet<Socket>();
  private total = 0;
  private cutCount = 0;

  constructor(
    private readonly budgetBytes: number,
    private readonly logger: Logger,
  ) {}

  /** Express middleware: counts each answer from when it ends until its client has it all. */
  readonly track: RequestHandler = (req, res, next) => {
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    res.end = ((...args: unknown[]) => {
      const result = end(...args);
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
    // The usual case, an answer handed to its socket and taken whole by the kernel: nothing held.
    if (res.socket !== null && socket.writableLength === 0 && !this.held.has(socket)) return;
    let entry = this.held.get(socket);
    if (!entry) {
      entry = { bytes: 0, waiting: new Set() };
      this.held.set(socket, entry);
    }
    if (!res.writableFinished) {
      entry.waiting.add(res);
      res.once('finish', () => this.leave(socket, res));
      res.once('close', () => this.leave(socket, res));
    }
    if (!this.watched.has(socket)) {
      this.watched.add(socket);
      socket.on('drain', () => this.recount(socket));
      socket.once('close', () => this.forget(socket));
    }
    this.recount(socket);
    if (this.total > this.budgetBytes) this.makeRoom();
  }

  private leave(socket: Socket, res: Response): void {
    this.held.get(socket)?.waiting.delete(res);
    this.recount(socket);
  }

  /** What `socket` holds now: its queue, and the answers waiting for it that it does not hold yet. */
  private recount(socket: Socket): void {
    const entry = this.held.get(socket);
    if (!entry) return;
    let bytes = socket.destroyed ? 0 : socket.writableLength;
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
      { connections_cut: cut, unread_kib: kib(this.total), max_total_unread_kib: kib(this.budgetBytes) },
      'answers cut: the clients holding the most unread, with all unread answers at their memory budget',
    );
  }
}
