import type { Socket } from 'node:net';
import type { ConnectionCounts } from '../connection-counts.js';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Actor } from 'xstate';
import { createActor } from 'xstate';
import { WebSocketServer } from 'ws';
import { CLIENT_ID_FORM, clientIdFromHeader } from '../client-id.js';
import type { AppDeps } from '../deps.js';
import { apiKeyMatcher } from '../middleware/api-key.js';
import type { KernelSendQueues } from '../../integrations/kernel-send-queues.js';
import type { AnswerFrame } from './control-socket.js';
import { controlSocketLogic } from './control-socket.js';
import { closeGoingAway } from './going-away.js';
import type { ReplayWindow } from '../replay-window.js';
import { shownPath } from '../shown-path.js';
import type { LargeBodyTurns } from '../large-body-turns.js';
import type { ServedHosts } from '../served-host.js';
import { NOT_SERVED, ORIGIN_NOT_SERVED, servedHostsFor } from '../served-host.js';

export const CONTROL_PLANE_PATH = '/v1/events/ws';

/**
 * Refuses an upgrade with a plain HTTP answer, before any WebSocket exists: a JSON `detail`
 * naming the problem, as every HTTP answer of the service has, and `Retry-After` when a retry
 * later may succeed.
 */
function refuse(socket: Duplex, status: number, text: string, detail: string, retryAfterSeconds?: number): void {
  const body = JSON.stringify({ detail });
  const retry = retryAfterSeconds === undefined ? '' : `Retry-After: ${retryAfterSeconds}\r\n`;
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${retry}Connection: close\r\n\r\n${body}`,
  );
}

/** A handshake's key: 16 bytes in base64 (RFC 6455, 4.2.1). */
const HANDSHAKE_KEY = /^[+/0-9A-Za-z]{22}==$/;

/** What is wrong with a WebSocket handshake, as RFC 6455 asks of one, before `ws` (which answers in text/html) sees it. */
function handshakeProblem(req: IncomingMessage): { status: number; text: string; detail: string } | undefined {
  if (req.method !== 'GET')
    return {
      status: 405,
      text: 'Method Not Allowed',
      detail: `a WebSocket handshake is a GET, not a ${req.method ?? 'request without a method'}`,
    };
  const key = req.headers['sec-websocket-key'];
  if (typeof key !== 'string' || !HANDSHAKE_KEY.test(key.trim()))
    return { status: 400, text: 'Bad Request', detail: 'missing or invalid Sec-WebSocket-Key header' };
  const version = req.headers['sec-websocket-version'];
  if (version !== '13')
    return { status: 400, text: 'Bad Request', detail: 'missing or unsupported Sec-WebSocket-Version header; send 13' };
  return undefined;
}

/**
 * The WebSocket control plane on the HTTP server's `upgrade` event: one socket actor per
 * connection, at most WS_MAX_CONNECTIONS of them, frames at most WS_MAX_FRAME_BYTES (ws closes
 * a larger one with 1009), closed with 1001 at shutdown once the frames it took are answered.
 */
export class ControlPlane {
  private readonly wss: WebSocketServer;
  private readonly sockets = new Set<Actor<typeof controlSocketLogic>>();
  private readonly keyMatches: (presented: string) => boolean;
  /** Names a socket may be opened by (served-host.ts); undefined when keys keep strangers out. */
  private readonly hosts: ServedHosts | undefined;
  private closing = false;

  constructor(
    private readonly deps: AppDeps,
    private readonly connections: ConnectionCounts,
    private readonly replays: ReplayWindow<AnswerFrame> | undefined,
    private readonly kernel: KernelSendQueues,
    private readonly largeFrames: LargeBodyTurns,
  ) {
    // Frames are small JSON: compression would only cost memory per connection.
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: deps.config.websocket.maxFrameBytes,
      perMessageDeflate: false,
      clientTracking: false,
    });
    this.keyMatches = apiKeyMatcher(deps.config.http.apiKeys);
    this.hosts = servedHostsFor(deps.config.http);
  }

  get size(): number {
    return this.sockets.size;
  }

  /** For `server.on('upgrade')`: answers what is not the control plane, and refuses over the cap or while closing. */
  handleUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const { config } = this.deps;
    const path = (req.url ?? '').split('?')[0] ?? '';
    if (path !== CONTROL_PLANE_PATH)
      return refuse(
        socket,
        404,
        'Not Found',
        `no WebSocket endpoint at ${shownPath(path)}; the control plane is ${CONTROL_PLANE_PATH}`,
      );
    const problem = handshakeProblem(req);
    if (problem) return refuse(socket, problem.status, problem.text, problem.detail);
    if (this.closing)
      return refuse(socket, 503, 'Service Unavailable', 'the service is shutting down; connect again', 1);
    // A browser may open a socket to any address from any page: with no key to keep it out, the
    // page's origin is checked as well as the name it reached this service by.
    if (this.hosts && !this.hosts.serves(req.headers.host)) return refuse(socket, 403, 'Forbidden', NOT_SERVED);
    if (this.hosts && !this.hosts.servesOrigin(req.headers.origin, req.headers.host))
      return refuse(socket, 403, 'Forbidden', ORIGIN_NOT_SERVED);
    const headerKey = req.headers['x-api-key'];
    const presented = typeof headerKey === 'string' && headerKey.length > 0 ? headerKey : undefined;
    const keyRequired = config.http.apiKeys.length > 0;
    // A wrong key in the header is refused at once; a missing one may still come in the connect frame.
    if (keyRequired && presented !== undefined && !this.keyMatches(presented))
      return refuse(socket, 401, 'Unauthorized', 'invalid API key');
    const clientHeader = req.headers['x-client-id'];
    let headerClientId: string | undefined;
    try {
      headerClientId = clientIdFromHeader(Array.isArray(clientHeader) ? clientHeader.join(',') : clientHeader);
    } catch {
      return refuse(socket, 422, 'Unprocessable Entity', CLIENT_ID_FORM);
    }
    const tcp = socket as Socket;
    // Only a socket with a key takes a place among WS_MAX_CONNECTIONS (apart from requests and
    // streams). One whose key is still to come in its connect frame stays an unproven connection
    // until then: it gives way to newcomers like any keyless connection (connection-counts.ts).
    const admit = (): boolean => {
      this.connections.prove(tcp);
      return this.connections.claim(tcp, 'websocket');
    };
    const keyed = !keyRequired || presented !== undefined;
    if (keyed && !admit())
      return refuse(
        socket,
        503,
        'Service Unavailable',
        `at most ${this.deps.config.websocket.maxConnections} WebSocket connections (WS_MAX_CONNECTIONS); retry later`,
        5,
      );
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      if (this.closing) return closeGoingAway(ws, this.deps.system.clock);
      const actor = createActor(controlSocketLogic, {
        input: {
          socket: ws,
          system: this.deps.system,
          logger: this.deps.logger,
          sdkOverrides: () => this.deps.sdkConfig.overrides(),
          keyRequired,
          keyMatches: this.keyMatches,
          headerKeyAccepted: keyRequired && presented !== undefined,
          admit,
          replays: this.replays,
          popupsEnabled: this.deps.system.featureFlags['ui.dynamic_popups'] !== false,
          maxMessagesPerSecond: config.websocket.maxMessagesPerSecond,
          idleTimeoutMs: config.websocket.idleTimeoutSeconds * 1000,
          piiRules: config.privacy.piiRules,
          sessionKeys: this.deps.sessionKeys,
          headerClientId: headerClientId ?? null,
          kernelUnread: () => this.kernel.of(tcp),
          largeFrames: this.largeFrames,
        },
      });
      this.sockets.add(actor);
      this.deps.system.metrics.wsConnections.inc();
      ws.once('close', () => {
        this.sockets.delete(actor);
        this.deps.system.metrics.wsConnections.dec();
        actor.stop();
      });
      actor.start();
    });
  };

  /** Shutdown: every socket answers the frames it took, then closes with 1001; no new ones. */
  closeAll(): void {
    this.closing = true;
    for (const actor of this.sockets) actor.send({ type: 'shutdown' });
  }
}
