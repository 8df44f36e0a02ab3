import WebSocket from 'ws';

export type Frame = Record<string, unknown> & { type: string };

/**
 * A real `ws` client that keeps every frame it reads, so a test can wait for the one it expects
 * (an event, not a sleep) and then look at all of them.
 */
export class WsClient {
  readonly frames: Frame[] = [];
  closed: { code: number; reason: string } | undefined;
  private waiters: { predicate: (frame: Frame) => boolean; resolve: (frame: Frame) => void }[] = [];
  private closeWaiters: ((closed: { code: number; reason: string }) => void)[] = [];

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as Frame;
      this.frames.push(frame);
      const ready = this.waiters.filter((waiter) => waiter.predicate(frame));
      this.waiters = this.waiters.filter((waiter) => !ready.includes(waiter));
      for (const waiter of ready) waiter.resolve(frame);
    });
    socket.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      for (const resolve of this.closeWaiters) resolve(this.closed);
    });
  }

  static open(url: string, headers: Record<string, string> = {}): Promise<WsClient> {
    const socket = new WebSocket(url, { headers });
    const client = new WsClient(socket);
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(client));
      socket.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
      socket.once('error', reject);
    });
  }

  send(frame: Record<string, unknown>): void {
    this.socket.send(JSON.stringify(frame));
  }

  sendRaw(data: string | Buffer): void {
    this.socket.send(data);
  }

  /** The first frame, already read or still to come, that satisfies `predicate` and was not taken before. */
  next(predicate: (frame: Frame) => boolean): Promise<Frame> {
    const found = this.frames.find((frame) => predicate(frame) && !this.taken.has(frame));
    if (found) {
      this.taken.add(found);
      return Promise.resolve(found);
    }
    return new Promise((resolve) =>
      this.waiters.push({
        predicate: (frame) => predicate(frame) && !this.taken.has(frame),
        resolve: (frame) => {
          this.taken.add(frame);
          resolve(frame);
        },
      }),
    );
  }

  private readonly taken = new Set<Frame>();

  nextOfType(type: string, extra: (frame: Frame) => boolean = () => true): Promise<Frame> {
    return this.next((frame) => frame.type === type && extra(frame));
  }

  whenClosed(): Promise<{ code: number; reason: string }> {
    if (this.closed) return Promise.resolve(this.closed);
    return new Promise((resolve) => this.closeWaiters.push(resolve));
  }

  close(): void {
    this.socket.close();
  }
}
