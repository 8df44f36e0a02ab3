import type { Socket } from 'node:net';

/**
 * What a connection is doing: `http` for request/response (every connection starts so), `sse` for
 * an open event stream, `websocket` once upgraded. The long-lived kinds are counted apart so that
 * streams cannot use up the connections that ordinary requests need, and each kind has its own cap.
 */
export type ConnectionKind = 'http' | 'sse' | 'websocket';

export type ConnectionLimits = Record<ConnectionKind, number>;

/**
 * The open connections of the server by kind. The server admits each new socket as `http`; the
 * code that turns a connection into a stream or a WebSocket moves it to that kind with `claim`,
 * which refuses when that kind is full. A socket is uncounted when it closes, whatever its kind.
 */
export class ConnectionCounts {
  private readonly counts: Record<ConnectionKind, number> = { http: 0, sse: 0, websocket: 0 };
  private readonly kinds = new WeakMap<Socket, ConnectionKind>();

  constructor(readonly limits: ConnectionLimits) {}

  /** Every kind's cap together: the most sockets the server should ever hold (`server.maxConnections`). */
  get totalLimit(): number {
    return this.limits.http + this.limits.sse + this.limits.websocket;
  }

  /** A new connection, counted as `http`; false when MAX_CONNECTIONS are open (the caller drops it). */
  admit(socket: Socket): boolean {
    if (this.counts.http >= this.limits.http) return false;
    this.kinds.set(socket, 'http');
    this.counts.http += 1;
    socket.once('close', () => this.forget(socket));
    return true;
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

  private forget(socket: Socket): void {
    const kind = this.kinds.get(socket);
    if (kind === undefined) return;
    this.kinds.delete(socket);
    this.counts[kind] -= 1;
  }
}
