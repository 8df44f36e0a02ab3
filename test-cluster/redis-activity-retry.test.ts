import { Redis } from 'ioredis';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { ActivityDraft } from '../src/domain/activity.js';
import { StoreInDoubtError, StoreUnavailableError } from '../src/store/ports.js';
import { RedisActivityLog } from '../src/store/redis-activity-log.js';
import { startRedis, type RedisServer } from '../scripts/cluster/redis-server.js';

const servers: RedisServer[] = [];
const logs: RedisActivityLog[] = [];
afterAll(async () => {
  for (const log of logs) log.close();
  for (const server of servers) await server.stop();
});

const draft = (n: number): ActivityDraft => ({
  kind: 'event',
  at: 1_700_000_000_000 + n,
  session_id: `s${n}`,
  user_id: null,
  payload: { n },
  trace: { trace_id: 't', request_id: `r${n}` },
});

describe('RedisActivityLog when Redis goes away', () => {
  /** Two items committed, Redis killed, two more refused, Redis back on its AOF, one more committed: what the stream holds. */
  async function refusedThenBack(
    refusalsLeaveNothing: boolean,
  ): Promise<{ stream: number[]; held: (string | null)[]; refusedMs: number }> {
    const first = await startRedis({ fsync: 'always' });
    servers.push(first);
    const log = new RedisActivityLog({ url: first.url, capacity: 100, refusalsLeaveNothing });
    logs.push(log);
    await log.ready;
    log.append(draft(1));
    log.append(draft(2));
    await log.commit();

    await first.kill();
    log.append(draft(3));
    log.append(draft(4));
    const refusedAt = performance.now();
    await expect(log.commit()).rejects.toBeInstanceOf(StoreUnavailableError);
    const refusedMs = performance.now() - refusedAt;
    expect(log.health().status).toBe('failing');

    const again = await startRedis({ port: first.port, dir: first.dir, fsync: 'always' });
    servers.push(again);
    await vi.waitFor(() => expect(log.accepting()).toBe(true), { timeout: 10_000, interval: 50 });
    log.append(draft(5));
    await log.commit();
    expect(log.health().status).toBe('ok');
    const reader = new Redis(again.url);
    try {
      const entries = await reader.xrange('{kyc-activity}', '-', '+');
      return {
        stream: entries.map(([, fields]) => (JSON.parse(fields[1]!) as { payload: { n: number } }).payload.n),
        held: log.list({ limit: 10 }).map((item) => item.session_id),
        refusedMs,
      };
    } finally {
      reader.disconnect();
    }
  }

  it('embedded sessions: a refused commit is refused at once, and its items, queued still, are written once after Redis is back', async () => {
    const { stream, held, refusedMs } = await refusedThenBack(false);
    // Refused, not held until Redis is back (ioredis's offline queue would hold it).
    expect(refusedMs).toBeLessThan(2_500);
    expect(stream).toEqual([1, 2, 3, 4, 5]);
    expect(held).toEqual(['s1', 's2', 's3', 's4', 's5']);
  });

  it('cluster mode: a refused commit leaves nothing behind; the next commit writes its own items only', async () => {
    const { stream, held, refusedMs } = await refusedThenBack(true);
    expect(refusedMs).toBeLessThan(2_500);
    expect(stream).toEqual([1, 2, 5]);
    expect(held).toEqual(['s1', 's2', 's5']);
  });

  it('a write Redis did not answer is in doubt, and is not sent again when the connection comes back', async () => {
    const first = await startRedis({ fsync: 'always' });
    servers.push(first);
    const log = new RedisActivityLog({ url: first.url, capacity: 100, refusalsLeaveNothing: true });
    logs.push(log);
    await log.ready;
    await log.writeNow([{ draft: draft(1), writeKey: 'w1' }]);

    // Stopped, Redis leaves the write unanswered on its connection, and the look for its key after
    // it: the write may yet be applied, and the answer says so.
    process.kill(first.pid, 'SIGSTOP');
    await expect(log.writeNow([{ draft: draft(2), writeKey: 'w2' }])).rejects.toBeInstanceOf(StoreInDoubtError);
    // Gone before it read the write; back on the same port and AOF, a new connection is made.
    await first.kill();
    const again = await startRedis({ port: first.port, dir: first.dir, fsync: 'always' });
    servers.push(again);
    await vi.waitFor(() => log.writeNow([{ draft: draft(3), writeKey: 'w3' }]), { timeout: 10_000, interval: 100 });
    const reader = new Redis(again.url);
    try {
      const entries = await reader.xrange('{kyc-activity}', '-', '+');
      const stream = entries.map(([, fields]) => (JSON.parse(fields[1]!) as { payload: { n: number } }).payload.n);
      // The refused write would have come after the reconnection, before the next one.
      expect(stream).toEqual([1, 3]);
    } finally {
      reader.disconnect();
    }
  });
});

describe('RedisActivityLog.writeNow: refused only when nothing was applied', () => {
  async function logOn(): Promise<{ log: RedisActivityLog; admin: Redis; stream: () => Promise<number[]> }> {
    const server = await startRedis();
    servers.push(server);
    const log = new RedisActivityLog({ url: server.url, capacity: 100, refusalsLeaveNothing: true });
    logs.push(log);
    await log.ready;
    const admin = new Redis(server.url);
    const stream = async () =>
      (await admin.xrange('{kyc-activity}', '-', '+')).map(
        ([, fields]) => (JSON.parse(fields[1]!) as { payload: { n: number } }).payload.n,
      );
    return { log, admin, stream };
  }

  it('a write Redis holds past its 2 s bound and then applies is found by the look after it: acknowledged, written once', async () => {
    const { log, admin, stream } = await logOn();
    try {
      // CLIENT PAUSE WRITE holds every write command (reads still answer) until it ends.
      await admin.call('CLIENT', 'PAUSE', '2600', 'WRITE');
      const startedAt = performance.now();
      const id = await log.writeNow([{ draft: draft(1), writeKey: 'held' }]);
      expect(performance.now() - startedAt).toBeGreaterThan(2_000);
      expect(id).toBeGreaterThan(0);
      expect(await stream()).toEqual([1]);
      expect(await log.writeNow([{ draft: draft(1), writeKey: 'held' }])).toBe(id);
      expect(await stream()).toEqual([1]);
    } finally {
      admin.disconnect();
    }
  });

  it('a write held past its bound and the look: in doubt, never a refusal, and it is applied once Redis goes on', async () => {
    const { log, admin, stream } = await logOn();
    try {
      await admin.call('CLIENT', 'PAUSE', '5000', 'WRITE');
      const failure = await log.writeNow([{ draft: draft(2), writeKey: 'late' }]).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(StoreInDoubtError);
      expect((failure as Error).message).toContain('may have been applied');
      await vi.waitFor(async () => expect(await stream()).toEqual([2]), { timeout: 10_000, interval: 100 });
    } finally {
      admin.disconnect();
    }
  });

  it('cluster mode: a commit Redis holds past its bound after answering the PING is in doubt, or acknowledged when the look finds it', async () => {
    const { log, admin, stream } = await logOn();
    try {
      await admin.call('CLIENT', 'PAUSE', '2600', 'WRITE');
      log.append(draft(7));
      await log.commit();
      expect(await stream()).toEqual([7]);
      await admin.call('CLIENT', 'PAUSE', '5000', 'WRITE');
      log.append(draft(8));
      await expect(log.commit()).rejects.toBeInstanceOf(StoreInDoubtError);
      await vi.waitFor(async () => expect(await stream()).toEqual([7, 8]), { timeout: 10_000, interval: 100 });
    } finally {
      admin.disconnect();
    }
  });

  it('a write Redis answers with an error (NOREPLICAS) is refused for certain, and nothing of it is ever written', async () => {
    const { log, admin, stream } = await logOn();
    try {
      await admin.config('SET', 'min-replicas-to-write', '1');
      const one = await log.writeNow([{ draft: draft(3), writeKey: 'one' }]).catch((error: unknown) => error);
      const two = await log
        .writeNow([
          { draft: draft(4), writeKey: 'two:0' },
          { draft: draft(5), writeKey: 'two:1' },
        ])
        .catch((error: unknown) => error);
      for (const failure of [one, two]) {
        expect(failure).toBeInstanceOf(StoreUnavailableError);
        expect(failure).not.toBeInstanceOf(StoreInDoubtError);
        expect((failure as Error).message).toMatch(/NOREPLICAS|EXECABORT/);
      }
      await admin.config('SET', 'min-replicas-to-write', '0');
      await log.writeNow([{ draft: draft(6), writeKey: 'after' }]);
      expect(await stream()).toEqual([6]);
    } finally {
      admin.disconnect();
    }
  });
});

describe('RedisActivityLog.writeNow from many invocations at once', () => {
  it('writes that reach Redis together each keep their own answer: one refused leaves the others written, each once', async () => {
    const server = await startRedis();
    servers.push(server);
    const log = new RedisActivityLog({ url: server.url, capacity: 100 });
    logs.push(log);
    await log.ready;
    const reader = new Redis(server.url);
    try {
      // A write key holding a hash: the script's GET on it fails (WRONGTYPE), for that write only.
      await reader.hset('{kyc-activity}:write:broken:0', 'x', '1');
      const keys = Array.from({ length: 20 }, (_, n) => (n === 7 ? 'broken' : `inv${n}`));
      // Issued in one turn of the event loop, as a burst of invocations issues them.
      const settled = await Promise.allSettled(
        keys.map((key, n) => log.writeNow([{ draft: draft(n), writeKey: `${key}:0` }])),
      );
      expect(settled[7]!.status).toBe('rejected');
      expect((settled[7] as PromiseRejectedResult).reason).toBeInstanceOf(StoreUnavailableError);
      const ids = settled.filter((result) => result.status === 'fulfilled').map((result) => result.value);
      expect(ids).toHaveLength(19);
      expect(new Set(ids).size).toBe(19);
      // The same burst again (a replayed invocation): every write key seen before answers its first id and adds nothing.
      const again = await Promise.all(
        keys.filter((key) => key !== 'broken').map((key) => log.writeNow([{ draft: draft(0), writeKey: `${key}:0` }])),
      );
      expect(again).toEqual(ids);
      const entries = await reader.xrange('{kyc-activity}', '-', '+');
      expect(entries.map(([, fields]) => (JSON.parse(fields[1]!) as { payload: { n: number } }).payload.n)).toEqual(
        keys.map((_, n) => n).filter((n) => n !== 7),
      );
    } finally {
      reader.disconnect();
    }
  });
});
