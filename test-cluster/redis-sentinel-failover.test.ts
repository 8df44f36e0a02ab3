import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { RedisCommandFanout } from '../src/cluster/command-fanout.js';
import type { ActivityDraft } from '../src/domain/activity.js';
import type { AssistantCommand } from '../src/machines/session/machine-events.js';
import { StoreInDoubtError, StoreUnavailableError } from '../src/store/ports.js';
import { RedisActivityLog } from '../src/store/redis-activity-log.js';
import { freePort, startRedis, type RedisServer } from '../scripts/cluster/redis-server.js';

/**
 * ACTIVITY_LOG through Redis Sentinel (docs/how-to/production.md, Redis): a primary, two replicas and three
 * sentinels on loopback, the primary killed with SIGKILL under a load of appends.
 */
const servers: RedisServer[] = [];
const sentinels: ChildProcess[] = [];
const closers: (() => void)[] = [];
afterAll(async () => {
  for (const close of closers) close();
  for (const sentinel of sentinels) {
    if (sentinel.exitCode !== null || sentinel.signalCode !== null) continue;
    const exited = new Promise<void>((resolve) => sentinel.once('exit', () => resolve()));
    process.kill(sentinel.pid!, 'SIGTERM');
    await exited;
  }
  for (const server of servers) await server.stop();
});

const MASTER = 'mymaster';
const WORKERS = 4;

const draft = (n: number): ActivityDraft => ({
  kind: 'event',
  at: 1_700_000_000_000 + n,
  session_id: `s${n}`,
  user_id: null,
  payload: { n },
  trace: { trace_id: 't', request_id: `r${n}` },
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `redis-server <conf> --sentinel` on a free loopback port, ready once it monitors the primary. */
async function startSentinel(primaryPort: number): Promise<number> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'redis-sentinel-test-'));
  const conf = join(dir, 'sentinel.conf');
  writeFileSync(
    conf,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${MASTER} 127.0.0.1 ${primaryPort} 2`,
      // Short, for a test: a primary silent for 1 s is down, and a failover that stalls is retried after 5 s.
      `sentinel down-after-milliseconds ${MASTER} 1000`,
      `sentinel failover-timeout ${MASTER} 5000`,
      `sentinel parallel-syncs ${MASTER} 2`,
      '',
    ].join('\n'),
  );
  const child = spawn('redis-server', [conf, '--sentinel'], { stdio: ['ignore', 'pipe', 'pipe'] });
  sentinels.push(child);
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.includes('+monitor master')) resolve();
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`redis-server --sentinel exited with ${code}`)));
  });
  return port;
}

/** The sentinel's view of the primary: its port, and how many replicas and other sentinels it knows. */
async function sentinelView(port: number): Promise<{ primaryPort: number; replicas: number; others: number }> {
  const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true });
  try {
    await client.connect();
    const fields = (await client.call('SENTINEL', 'MASTER', MASTER)) as string[];
    const field = (name: string) => Number(fields[fields.indexOf(name) + 1]);
    return { primaryPort: field('port'), replicas: field('num-slaves'), others: field('num-other-sentinels') };
  } finally {
    client.disconnect();
  }
}

interface Attempt {
  n: number;
  sentAt: number;
  /** `in_doubt`: the write went out without an answer, so it may have been applied. */
  outcome?: 'acknowledged' | 'refused' | 'in_doubt';
  settledAt?: number;
}

describe('ACTIVITY_LOG through Redis Sentinel', () => {
  it('a primary killed under load: every acknowledged append is on the promoted replica, no refused one ever is, and appends go on', async () => {
    const primary = await startRedis();
    const replicas = [await startRedis(), await startRedis()];
    servers.push(primary, ...replicas);
    for (const server of [primary, ...replicas]) {
      const admin = new Redis(server.url);
      // Every node, since any may be promoted: a primary with no replica refuses writes (docs/how-to/production.md, Redis).
      // A replica's first sync at once, not after the 5 s a primary waits by default for others to share it.
      await admin.config('SET', 'min-replicas-to-write', '1', 'repl-diskless-sync-delay', '0');
      if (server !== primary) await admin.call('REPLICAOF', '127.0.0.1', String(primary.port));
      admin.disconnect();
    }
    const primaryAdmin = new Redis(primary.url);
    closers.push(() => primaryAdmin.disconnect());
    await vi.waitFor(async () => expect(await primaryAdmin.info('replication')).toContain('min_slaves_good_slaves:2'), {
      timeout: 30_000,
      interval: 100,
    });
    const sentinelPorts = [
      await startSentinel(primary.port),
      await startSentinel(primary.port),
      await startSentinel(primary.port),
    ];
    // Each sentinel finds the replicas in the primary's INFO and the others through the primary's hello channel.
    await vi.waitFor(
      async () => {
        for (const port of sentinelPorts)
          expect(await sentinelView(port)).toEqual({ primaryPort: primary.port, replicas: 2, others: 2 });
      },
      { timeout: 30_000, interval: 250 },
    );

    const address = `redis+sentinel://${sentinelPorts.map((port) => `127.0.0.1:${port}`).join(',')}/${MASTER}`;
    const log = new RedisActivityLog({ url: address, capacity: 100_000, refusalsLeaveNothing: true });
    closers.push(() => log.close());
    await log.ready;
    const fanout = new RedisCommandFanout(address, pino({ level: 'silent' }), { clock: { now: () => Date.now() } });
    closers.push(() => fanout.close());
    await fanout.ready;
    const heard: string[] = [];
    fanout.onCommand((sessionId) => heard.push(sessionId));
    const command: AssistantCommand = {
      command: 'show_popup',
      session_id: 'any',
      payload: { message: 'hello', delay_ms: 0, reason: 'test' },
    };
    await fanout.publish('before', [command]);
    await vi.waitFor(() => expect(heard).toContain('before'), { timeout: 5_000, interval: 20 });

    // Appends from several invocations at once, each waiting for its answer before the next.
    const attempts: Attempt[] = [];
    let next = 0;
    let running = true;
    closers.unshift(() => (running = false));
    const worker = async () => {
      while (running) {
        const attempt: Attempt = { n: next++, sentAt: performance.now() };
        attempts.push(attempt);
        try {
          await log.writeNow([{ draft: draft(attempt.n), writeKey: `w${attempt.n}` }]);
          attempt.outcome = 'acknowledged';
        } catch (error) {
          expect(error).toBeInstanceOf(StoreUnavailableError);
          attempt.outcome = error instanceof StoreInDoubtError ? 'in_doubt' : 'refused';
        }
        attempt.settledAt = performance.now();
        // A refusal while no primary is known is at once: not a busy loop meanwhile.
        if (attempt.outcome !== 'acknowledged') await sleep(20);
      }
    };
    const workers = Array.from({ length: WORKERS }, worker);
    // Under load before the kill: on a busy machine the replicas' first acknowledgements can take a while.
    await vi.waitFor(
      () => expect(attempts.filter((attempt) => attempt.outcome === 'acknowledged').length).toBeGreaterThan(50),
      {
        timeout: 20_000,
        interval: 50,
      },
    );
    const acknowledgedBefore = attempts.filter((attempt) => attempt.outcome === 'acknowledged').length;
    expect(acknowledgedBefore).toBeGreaterThan(50);

    primaryAdmin.disconnect();
    const killedAt = performance.now();
    await primary.kill();
    let promotedAt = 0;
    await vi.waitFor(
      async () => {
        const view = await sentinelView(sentinelPorts[0]!);
        expect(view.primaryPort).not.toBe(primary.port);
        promotedAt ||= performance.now();
      },
      { timeout: 30_000, interval: 100 },
    );
    const promotedPort = (await sentinelView(sentinelPorts[0]!)).primaryPort;
    expect(replicas.map((replica) => replica.port)).toContain(promotedPort);
    // Through the same log, now on the promoted replica: appends sent after the kill are acknowledged again.
    await vi.waitFor(
      () =>
        expect(
          attempts.filter((attempt) => attempt.outcome === 'acknowledged' && attempt.sentAt > killedAt).length,
        ).toBeGreaterThan(50),
      {
        timeout: 30_000,
        interval: 50,
      },
    );
    running = false;
    await Promise.all(workers);

    const acknowledged = attempts.filter((attempt) => attempt.outcome === 'acknowledged');
    // Refused only when nothing was applied: nothing sent, or Redis answered an error. In flight when
    // the primary died, or written on a new primary whose replica did not confirm it in time, an
    // append is in doubt instead (docs/explanation/cluster.md, Outages, Limits).
    const refused = attempts.filter((attempt) => attempt.outcome === 'refused');
    const inDoubt = attempts.filter((attempt) => attempt.outcome === 'in_doubt');
    const firstBack = Math.min(
      ...acknowledged.filter((attempt) => attempt.sentAt > killedAt).map((attempt) => attempt.settledAt!),
    );

    const reader = new Redis({ host: '127.0.0.1', port: promotedPort });
    closers.push(() => reader.disconnect());
    const stored = async () => {
      const entries = await reader.xrange('{kyc-activity}', '-', '+');
      return new Set(entries.map(([, fields]) => (JSON.parse(fields[1]!) as { payload: { n: number } }).payload.n));
    };
    const afterFailover = await stored();

    for (const attempt of acknowledged)
      expect(afterFailover.has(attempt.n), `acknowledged append ${attempt.n} is on the new primary`).toBe(true);
    for (const attempt of refused)
      expect(afterFailover.has(attempt.n), `refused append ${attempt.n} is not on the new primary`).toBe(false);
    expect(refused.length).toBeGreaterThan(0);

    // Later: a commit through the same log (read back on its tail, from the new primary), the
    // command channel again, and nothing refused has appeared meanwhile.
    await sleep(1_500);
    log.append(draft(next));
    await log.commit();
    expect(log.list({ limit: 1 }).map((item) => item.session_id)).toEqual([`s${next}`]);
    expect(log.health().status).toBe('ok');
    await vi.waitFor(
      async () => {
        await fanout.publish('after', [command]);
        expect(heard).toContain('after');
      },
      { timeout: 10_000, interval: 200 },
    );
    const later = await stored();
    expect(later.has(next)).toBe(true);
    for (const attempt of refused) expect(later.has(attempt.n), `refused append ${attempt.n}, later`).toBe(false);
    expect(later.size).toBe(afterFailover.size + 1);

    console.log(
      `sentinel failover: ${acknowledged.length} appends acknowledged (${acknowledgedBefore} in the first second), ${refused.length} refused, ` +
        `${inDoubt.length} in doubt (${inDoubt.filter((attempt) => afterFailover.has(attempt.n)).length} of them stored); ` +
        `promoted ${Math.round(promotedAt - killedAt)} ms after the kill, appends acknowledged again ${Math.round(firstBack - killedAt)} ms after it`,
    );
  });
});
