import { readFile } from 'node:fs/promises';
import type { Socket } from 'node:net';

/**
 * What the kernel holds for each TCP connection that its peer has not acknowledged: bytes written
 * that a reader which stopped reading leaves in this machine's memory, beyond what Node counts
 * (`writableLength` ends where the kernel's buffer begins, and Linux grows a connection's send
 * buffer to megabytes). Read from Linux's `/proc/self/net/tcp` and `tcp6` (`tx_queue`), at most
 * once every `minIntervalMs`: a stream or socket is charged its own queue as of the last reading
 * (docs/reference/limits.md, "Streams and sockets"; docs/decisions/0027-every-held-byte-charged.md).
 *
 * Elsewhere (no /proc) every queue reads 0: only what Node holds is counted there.
 */
export interface KernelSendQueues {
  /** Bytes the kernel holds unacknowledged for this connection, as of the last reading. */
  of(socket: Socket): number;
  /** How many readings have landed; undefined where the kernel gives no figures. */
  readings(): number | undefined;
  /**
   * Every connection with something queued as of the last reading, bytes by `connectionKey`; asks
   * for a new reading as `of` does. For an account that cannot follow every connection it serves
   * (src/http/unread-answers.ts): the reading names the few that hold anything.
   */
  queued(): ReadonlyMap<number, number>;
}

const TABLES = ['/proc/self/net/tcp', '/proc/self/net/tcp6'];

/**
 * A connection's key in the tables: its local and remote ports (the remote address is left out:
 * two peers on one port pair are both charged the larger queue).
 */
const keyOf = (localPort: number, remotePort: number) => localPort * 65_536 + remotePort;

/** The key `queued()` gives a connection's bytes under; undefined for a socket no longer connected. */
export function connectionKey(socket: Socket): number | undefined {
  const { localPort, remotePort } = socket;
  return localPort === undefined || remotePort === undefined ? undefined : keyOf(localPort, remotePort);
}

/**
 * Parses the tables' rows (`sl: local_address rem_address st tx_queue:rx_queue …`, addresses as
 * `HEX:PORT`, the queues as 8 hex digits each), keeping only connections with something queued.
 * Fields are found by their separating spaces, not split: a table can have tens of thousands of rows.
 */
export function parseSendQueues(table: string, into: Map<number, number>): void {
  let at = table.indexOf('\n') + 1;
  while (at > 0 && at < table.length) {
    const end = table.indexOf('\n', at);
    const next = end === -1 ? table.length : end + 1;
    const local = table.indexOf(': ', at) + 2;
    const remote = table.indexOf(' ', local) + 1;
    const state = table.indexOf(' ', remote) + 1;
    const queue = table.indexOf(' ', state) + 1;
    if (local > 1 && queue > 0 && queue + 8 <= next && table.slice(queue, queue + 8) !== '00000000') {
      const queued = Number.parseInt(table.slice(queue, queue + 8), 16);
      const key = keyOf(
        Number.parseInt(table.slice(remote - 5, remote - 1), 16),
        Number.parseInt(table.slice(state - 5, state - 1), 16),
      );
      if (queued > 0) into.set(key, Math.max(into.get(key) ?? 0, queued));
    }
    at = next;
  }
}

/**
 * Reads the tables in the background (the kernel takes tens of milliseconds to write them with
 * thousands of connections open: not on the event loop), at most once every `minIntervalMs`,
 * and only while something asks.
 */
export function kernelSendQueues(minIntervalMs = 1000, now: () => number = () => performance.now()): KernelSendQueues {
  let queues = new Map<number, number>();
  let readAt = Number.NEGATIVE_INFINITY;
  let reading = false;
  let available = true;
  let landed = 0;
  const refresh = () => {
    const at = now();
    if (!available || reading || at - readAt < minIntervalMs) return;
    readAt = at;
    reading = true;
    void Promise.allSettled(TABLES.map((table) => readFile(table, 'latin1'))).then((tables) => {
      reading = false;
      const next = new Map<number, number>();
      for (const table of tables) if (table.status === 'fulfilled') parseSendQueues(table.value, next);
      // No /proc (not Linux): never tried again.
      if (tables.every((table) => table.status === 'rejected')) available = false;
      queues = next;
      landed += 1;
    });
  };
  return {
    of(socket) {
      refresh();
      if (queues.size === 0) return 0;
      const key = connectionKey(socket);
      return key === undefined ? 0 : (queues.get(key) ?? 0);
    },
    readings: () => (available ? landed : undefined),
    queued() {
      refresh();
      return queues;
    },
  };
}

/** No kernel figures: only what Node holds is counted (tests of other parts, platforms without /proc). */
export const NO_KERNEL_QUEUES: KernelSendQueues = { of: () => 0, readings: () => undefined, queued: () => new Map() };
