import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { connectRedis } from '../store/redis-connection.js';
import type { AssistantCommand } from '../machines/session/machine-events.js';

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
}

const isCarried = (value: unknown): value is Carried => {
  const carried = value as Partial<Carried> | null;
  return (
    typeof carried?.session_id === 'string' &&
    typeof carried.command === 'object' &&
    carried.command !== null &&
    typeof carried.command.command === 'string'
  );
};

/**
 * Redis Pub/Sub on one channel: fire-and-forget fits commands (a socket that is not connected at
 * that moment has no use for one later), and one channel keeps one subscription per process
 * whatever the number of sessions. Delivery is to the sockets each process holds for the session.
 */
export class RedisCommandFanout implements CommandFanout {
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  private readonly listeners = new Set<(sessionId: string, command: AssistantCommand) => void>();
  readonly ready: Promise<void>;

  /** `url`: ACTIVITY_LOG, a redis:// URL or a redis+sentinel:// address (src/config/redis-address.ts). */
  constructor(
    url: string,
    private readonly logger: Logger,
    private readonly channel = '{kyc-activity}:commands',
  ) {
    this.publisher = connectRedis(url, { lazyConnect: true, maxRetriesPerRequest: 2 });
    this.subscriber = this.publisher.duplicate();
    // ioredis reconnects and resubscribes by itself; a publish that fails in an outage logs it.
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
          JSON.stringify({ session_id: sessionId, command } satisfies Carried),
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
    for (const listener of this.listeners) listener(carried.session_id, carried.command);
  }
}
