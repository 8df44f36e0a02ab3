import type { ServerResponse } from 'node:http';
import type { KernelSendQueues } from '../../integrations/kernel-send-queues.js';
import { sseRetry } from './sse-frame.js';

/** Headers that keep proxies and CDNs from caching, compressing or buffering the stream. */
export const SSE_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  'X-Accel-Buffering': 'no',
} as const;

/**
 * - `sent`: written, and the socket takes more.
 * - `full`: written, but the socket has more queued than it likes: wait for `drain` before more.
 * - `cut`: the client had more than the cap unread; the response was destroyed, nothing written.
 * - `closed`: the connection is already gone.
 */
export type SendResult = 'sent' | 'full' | 'cut' | 'closed';

/**
 * One open event stream. The cap is checked against what its client has not read that this
 * machine holds: `writableLength` (what node holds for this response and its socket) and what
 * the kernel holds unacknowledged for the connection (kernel-send-queues.ts; a stalled loopback
 * reader leaves megabytes there, unseen by `writableLength`). So a client that stops reading costs at
 * most `maxBufferBytes` plus what is written before the kernel's next reading.
 */
export class SseResponse {
  private drainListener: (() => void) | undefined;
  private corked = false;
  /** What the client had left unread, node's and the kernel's, when the stream was cut for it (for the log). */
  unreadWhenCut: { node_bytes: number; kernel_bytes: number } | undefined;
  /**
   * Whether the cap counts the kernel's bytes: for a live stream, yes. A replay is paced by the
   * socket's drain instead, and what the kernel holds of it (a loopback connection takes
   * megabytes) would cut a reader that keeps reading; the streams' share still counts them.
   */
  kernelCounted = true;

  constructor(
    private readonly res: ServerResponse,
    private readonly maxBufferBytes: number,
    private readonly kernel: KernelSendQueues,
  ) {}

  /** Sends the headers and the reconnection delay at once, so the client knows the stream is open. */
  start(retryMs: number): void {
    this.res.writeHead(200, SSE_HEADERS);
    this.res.socket?.setNoDelay(true);
    this.res.write(sseRetry(retryMs));
  }

  /** Unread bytes this machine holds for the client: node's and the kernel's. */
  get bufferedBytes(): number {
    return this.res.writableLength + this.kernelBytes;
  }

  /** The kernel's part of bufferedBytes, as of its last reading. */
  get kernelBytes(): number {
    const { socket } = this.res;
    return socket ? this.kernel.of(socket) : 0;
  }

  get isOpen(): boolean {
    return !this.res.destroyed && !this.res.writableEnded;
  }

  send(frame: Buffer): SendResult {
    if (!this.isOpen) return 'closed';
    if (this.res.writableLength + (this.kernelCounted ? this.kernelBytes : 0) >= this.maxBufferBytes) {
      this.unreadWhenCut = { node_bytes: this.res.writableLength, kernel_bytes: this.kernelBytes };
      this.cut();
      return 'cut';
    }
    return this.res.write(frame) ? 'sent' : 'full';
  }

  /** Holds writes until `uncork`, to go out in one system call. */
  cork(): void {
    if (this.corked || !this.isOpen) return;
    this.corked = true;
    this.res.cork();
  }

  uncork(): void {
    if (!this.corked) return;
    this.corked = false;
    this.res.uncork();
  }

  /** Calls `listener` once the socket has drained; replaces any listener set before. */
  whenDrained(listener: () => void): void {
    this.cancelDrain();
    this.drainListener = () => {
      this.drainListener = undefined;
      listener();
    };
    this.res.once('drain', this.drainListener);
  }

  cancelDrain(): void {
    if (this.drainListener) this.res.off('drain', this.drainListener);
    this.drainListener = undefined;
  }

  onClose(listener: () => void): void {
    this.res.once('close', listener);
  }

  /** A clean end (the terminating chunk): a reader sees the stream finish, not break. */
  end(): void {
    this.cancelDrain();
    if (this.isOpen) this.res.end();
  }

  cut(): void {
    this.cancelDrain();
    this.res.destroy();
  }
}
