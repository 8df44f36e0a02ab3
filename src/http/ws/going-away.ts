import type WebSocket from 'ws';
import type { AppClock } from '../../integrations/clock.js';
import { WsClose } from './control-frames.js';

/**
 * How long a client gets to answer the close frame sent at shutdown. `ws` waits 30 s for the
 * answer, and the HTTP server's close waits on every connection, so one client that stopped
 * reading held the process's exit for the whole `SHUTDOWN_GRACE_SECONDS`
 * (docs/explanation/architecture.md, "Shutdown").
 */
export const GOING_AWAY_ANSWER_MS = 1000;

/** Closes with 1001, and cuts the connection if the client has not answered within GOING_AWAY_ANSWER_MS. */
export function closeGoingAway(socket: WebSocket, clock: AppClock): void {
  socket.close(WsClose.shutdown.code, WsClose.shutdown.reason);
  const cut = clock.setTimeout(() => socket.terminate(), GOING_AWAY_ANSWER_MS);
  socket.once('close', () => clock.clearTimeout(cut));
}
