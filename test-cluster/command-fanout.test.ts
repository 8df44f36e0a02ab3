import pino from 'pino';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { COMMAND_FRESH_MS, PUBLISH_TIMEOUT_MS, RedisCommandFanout } from '../src/cluster/command-fanout.js';
import type { AssistantCommand } from '../src/machines/session/machine-events.js';
import { startRedis, type RedisServer } from '../scripts/cluster/redis-server.js';

// Control-plane commands carried between processes (src/cluster/command-fanout.ts,
// docs/explanation/cluster.md, "Control-plane pushes"), against a real Redis that stops answering.

const servers: RedisServer[] = [];
const closers: (() => void)[] = [];
afterAll(async () => {
  for (const close of closers) close();
  for (const server of servers) {
    process.kill(server.pid, 'SIGCONT');
    await server.stop();
  }
});

const command: AssistantCommand = {
  command: 'show_popup',
  session_id: 'any',
  payload: { message: 'hello', delay_ms: 0, reason: 'test' },
};

describe('RedisCommandFanout when Redis stops answering', () => {
  it('a publish gives up within its timeout, and the command is not delivered once Redis answers again', async () => {
    const redis = await startRedis();
    servers.push(redis);
    // A simulated clock for the commands' ages: the outage is taken to outlast a command's use.
    let now = 1_800_000_000_000;
    const clock = { now: () => now };
    const silent = pino({ level: 'silent' });
    const publisher = new RedisCommandFanout(redis.url, silent, { clock });
    const listener = new RedisCommandFanout(redis.url, silent, { clock });
    closers.push(
      () => publisher.close(),
      () => listener.close(),
    );
    await Promise.all([publisher.ready, listener.ready]);
    const heard: string[] = [];
    listener.onCommand((sessionId) => heard.push(sessionId));

    await publisher.publish('before', [command]);
    await vi.waitFor(() => expect(heard).toEqual(['before']), { timeout: 5_000, interval: 20 });

    // Stopped, Redis keeps the connections open and answers nothing.
    process.kill(redis.pid, 'SIGSTOP');
    const started = performance.now();
    await publisher.publish('during', [command]);
    const waitedMs = performance.now() - started;
    expect(waitedMs).toBeGreaterThanOrEqual(PUBLISH_TIMEOUT_MS - 50);
    expect(waitedMs).toBeLessThan(PUBLISH_TIMEOUT_MS + 1_000);

    // Redis resumes and runs the publish it had in its socket buffer: heard, but too late to use.
    now += COMMAND_FRESH_MS + 1;
    process.kill(redis.pid, 'SIGCONT');
    await vi.waitFor(
      async () => {
        await publisher.publish('after', [command]);
        expect(heard).toContain('after');
      },
      { timeout: 10_000, interval: 200 },
    );
    expect(heard.filter((id) => id !== 'after')).toEqual(['before']);
  });
});
