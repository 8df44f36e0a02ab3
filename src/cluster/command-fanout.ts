import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { AppClock } from '../integrations/clock.js';
import { connectRedis } from '../store/redis-connection.js';
import type { AssistantCommand } from '../machines/session/machine-events.js';

/**
 * How long a publish may wait for Redis. It runs inside the session's invocation, which holds the
 * session's object: a Redis that stops answering (a frozen primary keeps its connections open)
 * held it, and every later event of the session behind it, until Redis came back.
 */
export const PUBLISH_TIMEOUT_MS = 2_000;
/**
 * A command older than this when a process hears it is dropped: a command is for the socket
 * connected when it was decided. A publish refused by its timeout is still in Redis's socket
 * buffer, and a frozen Redis that resumes runs it then; its subscribers' own messages wait the same
 * way. Wide enough for the clocks of a cluster's machines to differ by seconds.
 */
export const COMMAND_FRESH_MS = 10_000;

/**
 * What a session tells its client unprompted (control-plane `command` frames), carried to every
 * service process: a field SDK's socket sits on whichever process the load balancer chose, and
 * the invocation that decided may have run on another one, or in a timer's wake with no request.
 */
export interface CommandFanout {
  /** Never throws: a command is a hint for a live socket, not a record; one lost to a Redis outage is logged. */
  publish(sessionId: string, commands: readonly AssistantCommand[]): Promise<void>;
  /** Every command published by any process, this one included. */
  onCommand(listener: (sessionId: string, command: AssistantCommand) => void): void;
  close(): void;
}

interface Carried {
  session_id: string;
  command: AssistantCommand;
  /** When it was published (epoch ms, the publishing process's clock). */
  sent_at: number;
}

const isCarried = (value: unknown): value is Carried => {
  const carried = value as Partial<Carried> | null;
  return (
    typeof carried?.session_id === 'string' &&
    typeof carried.sent_at === 'number' &&
    typeof carried.command === 'object' &&
    carried.command !== null &&
    typeof carried.command.command === 'string'
  );
};

export interface CommandFanoutOptions {
  clock: Pick<AppClock, 'now'>;
  channel?: string;
  /** COMMAND_FRESH_MS unless a test says. */
  freshMs?: number;
}

/**
 * Redis Pub/Sub on one channel: fire-and-forget fits commands (a socket that is not connected at
 * that moment has no use for one later), and one channel keeps one subscription per process
 * whatever the number of sessions. Delivery is to the sockets each process holds for the session.
 * A late command is dropped, not delivered: the publisher queues nothing while Redis is away, and
 * a command heard more than COMMAND_FRESH_MS after it was published is not handed on.
 */
export class RedisCommandFanout implements CommandFanout {
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  private readonly listeners = new Set<(sessionId: string, command: AssistantCommand) => void>();
  private readonly clock: Pick<AppClock, 'now'>;
  private readonly channel: string;
  private readonly freshMs: number;
  readonly ready: Promise<void>;

  /** `url`: ACTIVITY_LOG, a redis:// URL or a redis+sentinel:// address (src/config/redis-address.ts). */
  constructor(
    url: string,
    private readonly logger: Logger,
    options: CommandFanoutOptions,
  ) {
    this.clock = options.clock;
    this.channel = options.channel ?? '{kyc-activity}:commands';
    this.freshMs = options.freshMs ?? COMMAND_FRESH_MS;
    // No queue while disconnected and no resend on the next connection: a command sent late is
    // of no use (docs/explanation/cluster.md, "Control-plane pushes").
    this.publisher = connectRedis(url, {
      lazyConnect: true,
      maxRetriesPerRequest: 2,
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      commandTimeout: PUBLISH_TIMEOUT_MS,
    });
    // The subscriber keeps ioredis's offline queue and resend: it subscribes again by itself after a reconnection.
    this.subscriber = connectRedis(url, { lazyConnect: true, maxRetriesPerRequest: 2 });
    // A publish that fails in an outage logs it.
    this.publisher.on('error', () => {});
    this.subscriber.on('error', () => {});
    this.subscriber.on('message', (_channel: string, message: string) => this.deliver(message));
    this.ready = Promise.all([this.publisher.connect(), this.subscriber.connect()]).then(async () => {
      await this.subscriber.subscribe(this.channel);
    });
  }

  async publish(sessionId: string, commands: readonly AssistantCommand[]): Promise<void> {
    try {
      for (const command of commands)
        await this.publisher.publish(
          this.channel,
          JSON.stringify({ session_id: sessionId, command, sent_at: this.clock.now() } satisfies Carried),
        );
    } catch (error) {
      this.logger.warn(
        { err: error, session_id: sessionId },
        'control commands not carried to other processes: Redis unreachable',
      );
    }
  }

  onCommand(listener: (sessionId: string, command: AssistantCommand) => void): void {
    this.listeners.add(listener);
  }

  close(): void {
    this.subscriber.disconnect();
    this.publisher.disconnect();
  }

  private deliver(message: string): void {
    let carried: unknown;
    try {
      carried = JSON.parse(message);
    } catch {
      carried = undefined;
    }
    if (!isCarried(carried)) {
      this.logger.warn(
        { channel: this.channel },
        'ignored a message on the command channel that is not a session command',
      );
      return;
    }
    const ageMs = this.clock.now() - carried.sent_at;
    if (ageMs > this.freshMs) {
      this.logger.warn(
        { session_id: carried.session_id, command: carried.command.command, age_ms: ageMs },
        'dropped a control command heard too late to be of use',
      );
      return;
    }
    for (const listener of this.listeners) listener(carried.session_id, carried.command);
  }
}
