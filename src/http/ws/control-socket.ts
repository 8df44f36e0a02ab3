import { redactForIngest, redactValue } from '../../domain/event-redaction.js';
import { shownCut } from '../../privacy/shown-cut.js';
import type { PiiRules } from '../../privacy/rules.js';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { stringify } from 'safe-stable-stringify';
import type WebSocket from 'ws';
import { fromCallback } from 'xstate';
import { ingestSdkEvent } from '../../use-cases/ingest-sdk-event.js';
import type { AskFailure, AskResult, SessionHost } from '../../actor-system/session-host.js';
import type { ActorSystem } from '../../actor-system/system.js';
import type { Trace } from '../../domain/activity.js';
import type { SdkConfigOverrides } from '../../domain/sdk-config.js';
import { EventInSchema } from '../../domain/sdk-event.js';
import type { SessionKeys } from '../../domain/session-key.js';
import { newTraceId } from '../../domain/trace.js';
import type { TriggerDecision } from '../../domain/trigger-policy.js';
import type { AssistantCommand } from '../../machines/session/machine-events.js';
import { failureOf } from '../ask.js';
import { describeIssues } from '../http-error.js';
import type { ConnectFrame, ControlStateFrame, TriggerEvaluateFrame } from './control-frames.js';
import {
  AnyFrame,
  CONTROL_EVENTS,
  ConnectFrame as ConnectSchema,
  ControlStateFrame as ControlStateSchema,
  HeartbeatFrame,
  TriggerEvaluateFrame as TriggerEvaluateSchema,
  WsClose,
} from './control-frames.js';
import type { LargeBodyTurns } from '../large-body-turns.js';
import { LARGE_BODY_BYTES } from '../large-body-turns.js';
import { closeGoingAway } from './going-away.js';
import type { ReplayWindow } from '../replay-window.js';
import { loneSurrogatePath, mayHoldLoneSurrogate } from '../well-formed-body.js';
import { digestOf } from '../../domain/digest.js';
import { evaluateSurfaces, evaluateTrigger } from '../../use-cases/decisions.js';

/** A frame's size in bytes, however ws delivered it. */
function rawSize(data: WebSocket.RawData): number {
  if (Array.isArray(data)) return data.reduce((total, part) => total + part.length, 0);
  return data.byteLength;
}

/** How much of a frame's `message_id` an error frame echoes. */
const MAX_ECHOED_ID = 128;
/**
 * Unread bytes a socket may leave in this machine, in node's queue and the kernel's together,
 * before it is cut: tens of answers, and at WS_MAX_CONNECTIONS (2,000) sockets 64 MiB at most
 * together. Node's queue alone was no bound: the kernel takes megabytes from a reader that stopped.
 */
export const MAX_UNREAD_BYTES = 32 * 1024;

export interface ControlSocketInput {
  socket: WebSocket;
  system: ActorSystem<SessionHost>;
  logger: Logger;
  sdkOverrides: () => SdkConfigOverrides;
  /** Whether a key is needed, and whether one given matches (constant time). */
  keyRequired: boolean;
  keyMatches: (presented: string) => boolean;
  /** A valid X-API-Key came with the upgrade request. */
  headerKeyAccepted: boolean;
  /** Session frames already answered, by message id (undefined: REPLAY_WINDOW_SECONDS=0). */
  replays: ReplayWindow<AnswerFrame> | undefined;
  /** For a socket whose key came in its connect frame: takes its place among WS_MAX_CONNECTIONS; false when they are all taken. */
  admit: () => boolean;
  popupsEnabled: boolean;
  maxMessagesPerSecond: number;
  idleTimeoutMs: number;
  /** The `X-Client-ID` of the upgrade request, if any. */
  headerClientId: string | null;
  /** What counts as an identity value (PII_EXTRA_KEYS included). */
  piiRules: PiiRules;
  /** The keys sessions are known by, the same as HTTP's. */
  sessionKeys: SessionKeys;
  /** What the kernel holds unacknowledged for this connection (kernel-send-queues.ts), as of its last reading. */
  kernelUnread: () => number;
  /** Where a large frame waits for a turn of the event loop of its own (large-body-turns.ts). */
  largeFrames: LargeBodyTurns;
}

/** How long a socket may wait before sending its key in the connect frame (docs/explanation/security.md). */
export const AUTH_TIMEOUT_MS = 10_000;

/** An answer frame as a replay repeats it. */
export type AnswerFrame = Record<string, unknown>;

const REUSED_ID = 'message_id: already used for a different frame of this session; send a new id';
const HTTP_ONLY = { code: 'http_only', message: 'This signal must use HTTP POST /v1/events' } as const;

const RETRYABLE: ReadonlySet<AskFailure['reason']> = new Set(['capacity', 'timeout', 'unavailable', 'memory']);
/** `start_voice_agent` over HTTP is a suggestion the client confirms over the socket. */
const wsAction = (decision: TriggerDecision): 'suggest_start_voice_agent' | 'none' =>
  decision.trigger ? 'suggest_start_voice_agent' : 'none';

/**
 * One control-plane connection as an actor: it validates each frame, turns it into the session
 * command HTTP would send, and forwards the commands its session's machine decides on. It holds
 * no session state; the session actor does.
 */
export const controlSocketLogic = fromCallback<{ type: 'shutdown' }, ControlSocketInput>(({ input, receive }) => {
  const { socket, system, logger } = input;
  const { clock, sessionHost } = system;
  let sessionKey: string | null = null;
  let userId: string | null = null;
  /** The user id as sent, used only to find the session key (which never holds it raw: session-key.ts). */
  let keyUserId: string | null = null;
  let clientId: string | null = null;
  let unsubscribe: (() => void) | undefined;
  let windowStart = clock.now();
  let inWindow = 0;
  let idleTimer: unknown;
  // The socket's mailbox: session frames are handled one after another, each answered before the
  // next starts, so acks, responses and the commands they cause arrive in the order sent.
  let mailbox: Promise<unknown> = Promise.resolve();
  let shuttingDown = false;
  let authenticated = !input.keyRequired || input.headerKeyAccepted;
  const enqueue = (work: () => Promise<unknown>) => {
    mailbox = mailbox.then(work, work);
  };

  const send = (frame: Record<string, unknown>) => {
    if (socket.readyState !== socket.OPEN) return;
    socket.send(JSON.stringify(frame));
    // What a client has not read stays in this process once the kernel's buffers are full: a
    // client that stopped reading is cut, not queued for without end (docs/reference/limits.md, Sockets).
    const unread = socket.bufferedAmount + input.kernelUnread();
    if (unread > MAX_UNREAD_BYTES) {
      logger.warn(
        { unread_bytes: unread, kernel_bytes: unread - socket.bufferedAmount },
        'control socket cut: its client stopped reading',
      );
      socket.terminate();
    }
  };
  const fail = (code: string, message: string, messageId?: string | null) =>
    send({ type: 'error', code, message, message_id: messageId ?? null });
  const close = ({ code, reason }: { code: number; reason: string }) => socket.close(code, reason);
  const trace = (): Trace => ({ trace_id: newTraceId(), request_id: randomUUID() });

  const armIdle = () => {
    if (idleTimer !== undefined) clock.clearTimeout(idleTimer);
    idleTimer = clock.setTimeout(() => close(WsClose.idle), input.idleTimeoutMs);
  };

  const push = (command: AssistantCommand) => send({ type: 'command', command_id: randomUUID(), ...command });

  const answered = <T>(
    result: AskResult<T>,
    sessionKey: string,
    messageId: string | null | undefined,
  ): T | undefined => {
    if (result.ok) return result.value;
    // What a retry can get past (no room, no memory, the store or an engine refusing, a slow answer)
    // is `unavailable`, as HTTP answers it 503; only a session that failed is an internal error. The
    // message is HTTP's detail, so it names the same cause (which engine is unreachable, say).
    fail(
      RETRYABLE.has(result.reason) ? 'unavailable' : 'internal_error',
      failureOf(result, sessionKey).message,
      messageId,
    );
    return undefined;
  };

  const onConnect = (frame: ConnectFrame, rawUserId: string | null) => {
    const key = input.sessionKeys.sessionKeyFor(frame.session_id, rawUserId);
    if (!key.ok) return fail('invalid_frame', key.detail, frame.message_id);
    unsubscribe?.();
    sessionKey = key.key;
    userId = frame.user_id ?? null;
    keyUserId = rawUserId;
    clientId = frame.client_id ?? input.headerClientId;
    unsubscribe = sessionHost.subscribe(sessionKey, push);
    send({
      type: 'ack',
      status: 'ok',
      detail: 'connected',
      message_id: frame.message_id ?? null,
      session_id: sessionKey,
    });
  };

  const evaluation = (signals: {
    screen?: string | undefined;
    time_spent?: number | undefined;
    errors?: string[] | undefined;
    idle_seconds?: number | undefined;
  }) => ({
    signals,
    user_id: userId,
    client_id: clientId,
    header_client_id: input.headerClientId,
    sdk_overrides: input.sdkOverrides(),
    trace: trace(),
  });

  const onControlState = (frame: ControlStateFrame, key: string) => {
    if (!(CONTROL_EVENTS as readonly string[]).includes(frame.event))
      return fail(HTTP_ONLY.code, HTTP_ONLY.message, frame.message_id);
    // The HTTP event this frame stands for, validated by the very schema HTTP uses.
    const event = EventInSchema.safeParse({
      session_id: key,
      event: frame.event,
      user_id: userId,
      client_id: clientId,
      screen: frame.screen,
      screen_id: frame.screen,
      errors: frame.errors,
      failure_reason_code: frame.failure_reason_code,
      component_id: frame.component_id,
      component_type: frame.component_type,
      properties: frame.signal_strength ? { signal_strength: frame.signal_strength } : undefined,
    });
    if (!event.success) return fail('invalid_frame', describeIssues(event.error, 'frame'), frame.message_id);
    const ingest = event.data;
    onceById(key, frame, async () => {
      if (
        !answered(
          await ingestSdkEvent(
            sessionHost,
            key,
            redactForIngest(ingest, input.piiRules),
            trace(),
            'control_plane',
            frame.message_id ?? undefined,
          ),
          key,
          frame.message_id,
        )
      )
        return undefined;
      const ack = { type: 'ack', status: 'ok', detail: frame.event, message_id: frame.message_id ?? null };
      send(ack);
      // The session decides on its own what this changes; anything it decides arrives as a command.
      await evaluateSurfaces(sessionHost, key, {
        ...evaluation({ screen: frame.screen ?? undefined }),
        popups_enabled: input.popupsEnabled,
        knowledge_base: system.agentContext.knowledgeBase,
      });
      return ack;
    });
  };

  const onTriggerEvaluate = (frame: TriggerEvaluateFrame, key: string) => {
    const { screen, time_spent, errors, idle_seconds } = frame.signals;
    const signals = {
      screen: screen ?? undefined,
      time_spent: time_spent ?? undefined,
      errors: errors ?? undefined,
      idle_seconds: idle_seconds ?? undefined,
    };
    onceById(key, frame, async () => {
      const result = await evaluateTrigger(sessionHost, key, evaluation(signals));
      const decision = answered(result, key, frame.message_id);
      if (!decision) return undefined;
      const response = {
        type: 'trigger_response',
        message_id: frame.message_id ?? null,
        ...decision,
        action: wsAction(decision),
      };
      send(response);
      return response;
    });
  };

  /**
   * Runs a session frame in the mailbox, once per `message_id` of its session within the replay
   * window: an app that sends a frame again (it reconnected before the answer came) gets the first
   * answer, and the session changes once, as over HTTP (docs/reference/limits.md). `work` sends its own
   * answer, in order with what follows it, and returns it for replays; undefined if refused.
   */
  const onceById = (
    key: string,
    frame: { type: string; message_id?: string | null | undefined },
    work: () => Promise<AnswerFrame | undefined>,
  ) => {
    const messageId = frame.message_id;
    const { replays } = input;
    if (!replays || !messageId) return enqueue(work);
    const replayKey = digestOf('ws', key, frame.type, messageId);
    // Canonical JSON, as over HTTP (middleware/replays.ts): key order does not make another frame.
    const fingerprint = digestOf(stringify(frame));
    const check = replays.check(replayKey, fingerprint);
    if (check.kind === 'conflict') return fail('invalid_frame', REUSED_ID, messageId);
    const runAsFirst = async (settle: (answer: AnswerFrame | undefined, sizeBytes?: number) => void) => {
      const answer = await work().catch((error: unknown) => {
        settle(undefined);
        throw error;
      });
      settle(answer, answer ? JSON.stringify(answer).length : 0);
    };
    if (check.kind === 'first') return enqueue(() => runAsFirst(check.settle));
    enqueue(async () => {
      const turn = await replays.afterFirst(replayKey, fingerprint, check.answer);
      if (turn.kind === 'answer') return send(turn.answer);
      if (turn.kind === 'conflict') return fail('invalid_frame', REUSED_ID, messageId);
      // The first was refused and changed nothing: this copy runs, and any other copy waits for it.
      await runAsFirst(turn.settle);
    });
  };

  /** Within the rate: true; over it the frame is dropped, and a client that keeps on is cut off. */
  const withinRate = (): boolean => {
    const now = clock.now();
    if (now - windowStart >= 1000) {
      windowStart = now;
      inWindow = 0;
    }
    inWindow += 1;
    if (inWindow > input.maxMessagesPerSecond * 2) close(WsClose.rateLimited);
    return inWindow <= input.maxMessagesPerSecond;
  };

  /**
   * Before its key, a socket gets no answer at all: the one frame it may send is a connect with a
   * valid `api_key`, and anything else (a heartbeat, a bad frame, a wrong key) closes it 4401. So
   * a socket without a key cannot keep itself open, nor learn anything, nor hold a place.
   */
  const authenticate = (data: WebSocket.RawData, isBinary: boolean): void => {
    let frame: unknown;
    try {
      frame = isBinary ? undefined : JSON.parse((data as Buffer).toString());
    } catch {
      frame = undefined;
    }
    const connect = ConnectSchema.safeParse(frame);
    if (!connect.success || !connect.data.api_key || !input.keyMatches(connect.data.api_key))
      return close(WsClose.unauthorized);
    if (!input.admit()) return close(WsClose.capacity);
    authenticated = true;
    onMessage(data, isBinary);
  };

  const onMessage = (data: WebSocket.RawData, isBinary: boolean) => {
    if (!authenticated) return authenticate(data, isBinary);
    // Arrived after shutdown began: refused, so the app sends it again once it reconnects.
    if (shuttingDown) return fail('unavailable', 'server shutting down: send it again after reconnecting');
    armIdle();
    if (!withinRate()) return fail('rate_limited', `at most ${input.maxMessagesPerSecond} messages a second`);
    if (isBinary) return fail('invalid_frame', 'frames must be JSON text');
    const text = (data as Buffer).toString();
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      return fail('invalid_json', 'frame is not valid JSON');
    }
    const illFormed = mayHoldLoneSurrogate(text) ? loneSurrogatePath(raw) : undefined;
    if (illFormed !== undefined)
      return fail(
        'invalid_frame',
        `frame${illFormed === '' ? '' : `.${illFormed}`}: holds a lone surrogate, which UTF-8 cannot keep; send well-formed Unicode`,
      );
    const frame = AnyFrame.safeParse(raw);
    if (!frame.success) return fail('invalid_frame', describeIssues(frame.error, 'frame'));
    // Echoed in errors before the frame is parsed whole: masked as the parsed frame's would be, then cut.
    const messageId =
      typeof frame.data.message_id === 'string' ? shownCut(frame.data.message_id, MAX_ECHOED_ID, '') : null;
    const parse = <
      S extends typeof ConnectSchema | typeof HeartbeatFrame | typeof ControlStateSchema | typeof TriggerEvaluateSchema,
    >(
      schema: S,
    ) => {
      const parsed = schema.safeParse(raw);
      if (!parsed.success) fail('invalid_frame', describeIssues(parsed.error, 'frame'), messageId);
      if (!parsed.success) return undefined;
      // Frames are client text like any body: identity values are masked before anything keeps or logs them.
      // The session id routes the frame and the key is compared, so both stay as sent (neither is kept).
      const data = parsed.data as S['_zod']['output'] & { session_id?: unknown; api_key?: unknown };
      return {
        ...redactValue(data, input.piiRules),
        session_id: data.session_id,
        api_key: data.api_key,
      } as S['_zod']['output'];
    };
    const type = frame.data.type;
    if (type === 'connect') {
      const connect = parse(ConnectSchema);
      const rawUserId = (raw as { user_id?: unknown }).user_id;
      return connect ? onConnect(connect, typeof rawUserId === 'string' ? rawUserId : null) : undefined;
    }
    if (type === 'heartbeat')
      return parse(HeartbeatFrame) ? send({ type: 'heartbeat', message_id: messageId }) : undefined;
    if (type !== 'control_state' && type !== 'trigger_evaluate')
      return fail(HTTP_ONLY.code, HTTP_ONLY.message, messageId);
    if (sessionKey === null) return fail('connect_required', 'send a connect frame first', messageId);
    const named =
      typeof frame.data.session_id === 'string'
        ? input.sessionKeys.sessionKeyFor(frame.data.session_id, keyUserId)
        : undefined;
    if (named && (!named.ok || named.key !== sessionKey))
      return fail('session_mismatch', 'session_id must be the connected session', messageId);
    if (type === 'control_state') {
      const control = parse(ControlStateSchema);
      return control ? onControlState(control, sessionKey) : undefined;
    }
    const evaluate = parse(TriggerEvaluateSchema);
    return evaluate ? onTriggerEvaluate(evaluate, sessionKey) : undefined;
  };

  const handle = (data: WebSocket.RawData, isBinary: boolean) => {
    // Nothing a client sends may take the process down.
    try {
      onMessage(data, isBinary);
    } catch (error) {
      logger.error({ err: error }, 'control frame failed');
      fail('internal_error', 'frame could not be handled');
    }
  };
  /** Frames of this socket waiting for their turn: the ones after a large frame wait behind it, in order. */
  let waiting = 0;
  socket.on('message', (data, isBinary) => {
    if (waiting === 0 && rawSize(data) < LARGE_BODY_BYTES) return handle(data, isBinary);
    // A large frame is handled in a turn of its own, as a large body is; the socket reads nothing
    // more until its frames have had their turn, so what waits is at most what one read brought.
    waiting += 1;
    socket.pause();
    input.largeFrames.take(() => {
      waiting -= 1;
      if (waiting === 0) socket.resume();
      handle(data, isBinary);
    });
  });
  socket.on('error', (error) => logger.debug({ err: error }, 'control socket error'));
  receive((event) => {
    if (event.type !== 'shutdown' || shuttingDown) return;
    // The frames already taken are answered first: each is stored as it is handled, and one
    // stored but never acked would be sent again by the app after it reconnects, a duplicate.
    // The server's grace period bounds the wait.
    shuttingDown = true;
    enqueue(async () => closeGoingAway(socket, clock));
  });
  armIdle();
  // A socket whose key is still to come has this long to send it, whatever WS_IDLE_TIMEOUT_SECONDS says.
  const authTimer = authenticated
    ? undefined
    : clock.setTimeout(() => authenticated || close(WsClose.unauthorized), AUTH_TIMEOUT_MS);

  return () => {
    unsubscribe?.();
    if (idleTimer !== undefined) clock.clearTimeout(idleTimer);
    if (authTimer !== undefined) clock.clearTimeout(authTimer);
    if (socket.readyState === socket.OPEN || socket.readyState === socket.CONNECTING) socket.terminate();
  };
});
