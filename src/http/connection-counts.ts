import type { Socket } from 'node:net';

/**
 * What a connection is doing: `http` for request/response (every connection starts so), `sse` for
 * an open event stream, `websocket` once upgraded. The long-lived kinds are counted apart so that
 * streams cannot use up the connections that ordinary requests need, and each kind has its own cap.
 */
export type ConnectionKind = 'http' | 'sse' | 'websocket';

export type ConnectionLimits = Record<ConnectionKind, number>;

export interface UnprovenLimits {
  /** Connections one client address may hold before any of them has shown a key (MAX_UNAUTHENTICATED_PER_CLIENT). */
  perClient: number;
  /** How long an unproven connection is left alone before a newcomer may take its place. */
  graceMs: number;
  now: () => number;
}

/**
 * The open connections of the server by kind. The server admits each new socket as `http`; the
 * code that turns a connection into a stream or a WebSocket moves it to that kind with `claim`,
 * which refuses when that kind is full. A socket is uncounted when it closes, whatever its kind.
 *
 * A connection is unproven until a request on it has passed the key check (any request, with no
 * API_KEY), or its WebSocket has. Unproven connections are what a flood without a key consists
 * of, so they give way: a client holding MAX_UNAUTHENTICATED_PER_CLIENT of them loses its oldest
 * to its next, and with MAX_CONNECTIONS open a newcomer takes the place of the oldest unproven
 * connection anyone holds. Only connections older than `graceMs` give way, so a burst of honest
 * new connections does not cut itself before its first requests arrive; a newcomer that finds
 * none is refused. /health and keyed clients therefore get in while slow, keyless connections
 * fill the server (docs/explanation/security.md).
 *
 * Keys ship inside mobile apps, so a key is no proof of good faith: with no unproven connection
 * to give way, the proven request connection whose last request began longest ago gives way
 * instead (past the same grace): an idle keep-alive, or a body trickled for seconds. A client
 * that keeps sending requests keeps its connection; 10,500 keyed connections that each trickle a
 * body no longer lock everyone else out (docs/reference/limits.md).
 */
export class ConnectionCounts {
  private readonly counts: Record<ConnectionKind, number> = { http: 0, sse: 0, websocket: 0 };
  private readonly kinds = new WeakMap<Socket, ConnectionKind>();
  /** Oldest first (a Map keeps insertion order), with when each was admitted and from where. */
  private readonly unproven = new Map<Socket, { since: number; client: string }>();
  private readonly unprovenByClient = new Map<string, Set<Socket>>();
  /** Proven connections, with when their last request began: updated in place, so a request adds no Map churn. */
  private readonly proven = new Map<Socket, { at: number }>();

  constructor(
    readonly limits: ConnectionLimits,
    private readonly unprovenLimits: UnprovenLimits,
  ) {}

  /** Every kind's cap together: the most sockets the server should ever hold (`server.maxConnections`). */
  get totalLimit(): number {
    return this.limits.http + this.limits.sse + this.limits.websocket;
  }

  /**
   * A new connection, counted as `http` and unproven; false when there is no room even after the
   * oldest unproven connections have given way (the caller drops it).
   */
  admit(socket: Socket): boolean {
    const client = socket.remoteAddress ?? '';
    const mine = this.unprovenByClient.get(client);
    if (mine !== undefined && mine.size >= this.unprovenLimits.perClient && !this.evictOldest(mine.keys()))
      return false;
    if (this.counts.http >= this.limits.http && !this.evictOldest(this.unproven.keys()) && !this.evictLeastRecent())
      return false;
    this.kinds.set(socket, 'http');
    this.counts.http += 1;
    this.unproven.set(socket, { since: this.unprovenLimits.now(), client });
    if (mine) mine.add(socket);
    else this.unprovenByClient.set(client, new Set([socket]));
    socket.once('close', () => this.forget(socket));
    return true;
  }

  /**
   * A request on the connection has shown a valid key (or none is needed): it gives way to
   * newcomers only after every unproven connection, and then by how long ago its last request
   * began (this one's, now).
   */
  prove(socket: Socket): void {
    const now = this.unprovenLimits.now();
    const seen = this.proven.get(socket);
    if (seen !== undefined) {
      seen.at = now;
      return;
    }
    // Counted sockets only: one the server never admitted (a test's injected socket) is not tracked.
    if (this.kinds.has(socket)) this.proven.set(socket, { at: now });
    this.dropUnproven(socket);
  }

  private dropUnproven(socket: Socket): void {
    const entry = this.unproven.get(socket);
    if (entry === undefined) return;
    this.unproven.delete(socket);
    const mine = this.unprovenByClient.get(entry.client);
    mine?.delete(socket);
    if (mine?.size === 0) this.unprovenByClient.delete(entry.client);
  }

  isProven(socket: Socket): boolean {
    return !this.unproven.has(socket);
  }

  /**
   * Moves a connection to another kind (an event stream opening, a WebSocket upgrade); false, with
   * nothing changed, when that kind is at its cap. A socket never admitted (a test's injected one)
   * is counted from here on.
   */
  claim(socket: Socket, kind: ConnectionKind): boolean {
    const current = this.kinds.get(socket);
    if (current === kind) return true;
    if (this.counts[kind] >= this.limits[kind]) return false;
    if (current === undefined) socket.once('close', () => this.forget(socket));
    else this.counts[current] -= 1;
    this.kinds.set(socket, kind);
    this.counts[kind] += 1;
    return true;
  }

  /**
   * Back to `http` when a stream ends on a connection that stays open (keep-alive). Not refused at
   * the cap: the connection was admitted once already.
   */
  release(socket: Socket): void {
    const current = this.kinds.get(socket);
    if (current === undefined || current === 'http') return;
    this.counts[current] -= 1;
    this.counts.http += 1;
    this.kinds.set(socket, 'http');
  }

  kindOf(socket: Socket): ConnectionKind | undefined {
    return this.kinds.get(socket);
  }

  snapshot(): Record<ConnectionKind, number> {
    return { ...this.counts };
  }

  /** Cuts the first of `candidates` (oldest first) if it is past its grace; true when it made room. */
  private evictOldest(candidates: Iterator<Socket>): boolean {
    const oldest = candidates.next();
    if (oldest.done) return false;
    const entry = this.unproven.get(oldest.value);
    if (entry === undefined || this.unprovenLimits.now() - entry.since < this.unprovenLimits.graceMs) return false;
    // Uncounted now, not at its 'close' (which comes later): the newcomer takes its place at once.
    this.forget(oldest.value);
    oldest.value.destroy();
    return true;
  }

  /**
   * Cuts the proven request connection whose last request began longest ago, if that was past
   * the grace; true when it made room. Runs only with every request connection taken, so its scan
   * of them costs nothing while the server has room.
   */
  private evictLeastRecent(): boolean {
    let oldest: Socket | undefined;
    let oldestAt = this.unprovenLimits.now() - this.unprovenLimits.graceMs;
    for (const [socket, seen] of this.proven) {
      if (seen.at <= oldestAt && this.kinds.get(socket) === 'http') {
        oldest = socket;
        oldestAt = seen.at;
      }
    }
    if (oldest === undefined) return false;
    this.forget(oldest);
    oldest.destroy();
    return true;
  }

  private forget(socket: Socket): void {
    this.dropUnproven(socket);
    this.proven.delete(socket);
    const kind = this.kinds.get(socket);
    if (kind === undefined) return;
    this.kinds.delete(socket);
    this.counts[kind] -= 1;
  }
}
