import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRIMMED_MARK } from '../src/domain/session-budget.js';
import type { LiveKitStandIn } from '../test/support/livekit-stand-in.js';
import { startLiveKitStandIn } from '../test/support/livekit-stand-in.js';
import { SseTestClient } from '../test/support/sse-client.js';
import { clusterCalls, eventually } from './cluster-calls.js';
import { suiteCluster } from './fixtures/suite-cluster.js';

/** Small enough that one event of stuffing is past it. */
const SESSION_MAX_BYTES = 16_384;
/** What "promptly" means for an answer during an outage (a shared 2-core machine included). */
const PROMPT_MS = 5_000;
/** The session object retries an acknowledged event at most 5 s apart: once Redis is back, a retry runs it within that. */
const RECOVERY_MS = 30_000;

let liveKit: LiveKitStandIn;
beforeAll(async () => {
  liveKit = await startLiveKitStandIn();
});
afterAll(async () => {
  await liveKit?.close();
});

const { cluster, redis, restartRedis } = suiteCluster({
  name: 'cluster-acknowledged',
  processes: 2,
  env: () => ({ ...liveKit.env(), SESSION_MAX_BYTES: String(SESSION_MAX_BYTES) }),
  startTimeoutMs: 180_000,
});
const { post, get, activityOf, invocations } = clusterCalls(cluster);
const processUrl = (index: number) => `http://127.0.0.1:${cluster().processes[index]!.port}`;
/** The same calls to one process, past the proxy. */
const atProcess = (index: number) => clusterCalls(cluster, () => processUrl(index));

/** Client data of about `bytes`, in strings short enough for the privacy pass to keep whole. */
const stuffing = (bytes: number): Record<string, string> =>
  Object.fromEntries(Array.from({ length: Math.ceil(bytes / 2000) }, (_, index) => [`f${index}`, 'x'.repeat(2000)]));

describe('an SDK event acknowledged before its session runs it (SESSION_HOST=restate: real Restate server, real redis-server)', () => {
  it(
    'past SESSION_MAX_BYTES: the answer, given before the run, has no budget warning; the ' +
      'activity item of the event has it, and the session is trimmed',
    async () => {
      const answer = await post('/v1/events', {
        session_id: 'over-budget',
        event: 'component_input',
        screen: 'pan_details',
        component_id: 'pan',
        junk: stuffing(20_000),
      });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ status: 'ok', ingested_at: expect.any(Number) });
      const [item] = await eventually(
        () => activityOf('over-budget', 'event'),
        (items) => items.length > 0,
      );
      expect(item!.payload.warnings).toEqual(['session_budget_exceeded']);
      const session = await get('/api/sessions/over-budget');
      expect((session.body.latest_event as Record<string, unknown>)[TRIMMED_MARK]).toBe(true);
      // An unknown type is in the answer as well: the type alone decides it, before any run.
      const unknown = await post('/v1/events', {
        session_id: 'over-budget',
        event: 'workflow_model',
        screen: 'pan_details',
        junk: stuffing(20_000),
      });
      expect(unknown.body.warnings).toEqual(['unknown_event_type']);
      const items = await eventually(
        () => activityOf('over-budget', 'event'),
        (found) => found.length > 1,
      );
      expect(items[1]!.payload.warnings).toEqual(['unknown_event_type', 'session_budget_exceeded']);
    },
  );
});
/** The stream itself, as Redis holds it: each item once, whatever any process has read. */
async function streamItemsOf(sessionId: string): Promise<{ kind: string; payload: Record<string, unknown> }[]> {
  const reader = new Redis(redis().url);
  try {
    const entries = await reader.xrange('{kyc-activity}', '-', '+');
    return entries
      .map(
        ([, fields]) =>
          JSON.parse(fields[fields.indexOf('item') + 1]!) as {
            kind: string;
            session_id: string;
            payload: Record<string, unknown>;
          },
      )
      .filter((item) => item.session_id === sessionId);
  } finally {
    reader.disconnect();
  }
}
const eventScreens = (items: { kind: string; payload: Record<string, unknown> }[]) =>
  items.filter((item) => item.kind === 'event').map((item) => item.payload.screen);
const failed = (sessionId: string, screen: string) => ({
  session_id: sessionId,
  event: 'validation_failed',
  screen,
  component_id: 'pan',
  errors: ['pan_invalid'],
});
/** Both processes' probes and /health while Redis is down, as docs/how-to/production.md (Probes) says. */
async function probesWhileRedisIsDown(): Promise<void> {
  for (const index of [0, 1]) {
    expect((await atProcess(index).get('/health/live')).status).toBe(200);
    // Out of rotation while Redis does not answer (docs/how-to/production.md, Probes).
    expect((await atProcess(index).get('/health/ready')).status).toBe(503);
    // /health says why once this process has seen its connection drop (at once, or after one failed reconnect).
    const health = await eventually(
      () => atProcess(index).get('/health'),
      (answer) => answer.status === 503,
      PROMPT_MS,
    );
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({
      status: 'cluster_unreachable',
      store: { kind: 'redis', status: 'failing' },
      cluster: { redis: 'failing', restate: { ingress: 'ok', admin: 'ok' } },
    });
  }
}
/** Redis again on its port, from its AOF; then every process says so. */
async function redisBack(): Promise<void> {
  await restartRedis();
  for (const index of [0, 1]) {
    const health = await eventually(
      () => atProcess(index).get('/health'),
      (answer) => answer.status === 200,
    );
    expect(health.body).toMatchObject({ status: 'ok', cluster: { redis: 'ok' } });
    expect((await atProcess(index).get('/health/ready')).status).toBe(200);
  }
}
/** Until Restate has run every invocation it took for these sessions (stuck ones retry until Redis is back); a timer not yet due aside. */
async function allRun(sessionIds: string[]): Promise<void> {
  const list = sessionIds.map((id) => `'${id}'`).join(', ');
  const left = await eventually(
    () =>
      cluster().restate.query<{ n: number }>(
        `SELECT count(*) AS n FROM sys_invocation WHERE target_service_name = 'KycSession' AND target_service_key IN (${list}) AND status NOT IN ('completed', 'scheduled')`,
      ),
    (rows) => Number(rows[0]?.n ?? 0) === 0,
    RECOVERY_MS,
  );
  expect(Number(left[0]?.n)).toBe(0);
}

describe('Redis failing after an SDK event was acknowledged (real Restate server, real redis-server killed with SIGKILL and started again on its AOF)', () => {
  it(
    'events acknowledged behind a busy session, Redis gone while the first is being written: ' +
      'each applied once, recorded once in the stream and on every SSE reader',
    async () => {
      const session = 'held';
      expect((await post('/v1/events', { session_id: session, event: 'screen_view', screen: 'welcome' })).status).toBe(
        200,
      );
      await eventually(
        () => activityOf(session, 'event'),
        (items) => items.length === 1,
      );
      const readers = await Promise.all(
        [0, 1].map((index) => SseTestClient.open(`${processUrl(index)}/api/activity/stream?session_id=${session}`)),
      );
      await Promise.all(readers.map((reader) => reader.until((client) => client.retry !== undefined, 10_000)));

      // A voice start holds the session's turn in Restate while its room is being created.
      const gate = liveKit.gateNext('CreateRoom', `kyc-room-${session}`);
      const start = post('/v1/assistant/session/start', {
        session_id: session,
        user_id: 'u-held',
        screen: 'pan_details',
      });
      await gate.arrived;
      const queued = Array.from({ length: 5 }, (_, index) => `queued_${index}`);
      for (const [index, screen] of queued.entries()) {
        const answer = await atProcess(index % 2).post('/v1/events', failed(session, screen), {
          'idempotency-key': `held-${index}`,
        });
        expect(answer.status).toBe(200);
      }
      // Acknowledged and not run: each waits behind the start.
      expect((await invocations(session, 'ingest')).filter((row) => row.status !== 'completed')).toHaveLength(
        queued.length,
      );
      // AOF everysec: what was written so far reaches the disk before Redis goes.
      await new Promise((resolve) => setTimeout(resolve, 1500));

      // Frozen, Redis keeps its connections and answers nothing: the start's write and then the first event's are sent into it.
      process.kill(redis().pid, 'SIGSTOP');
      gate.answer('ok');
      // Its write went out and got no answer: in doubt, not refused (docs/explanation/cluster.md, Limits).
      const refusedStart = await start;
      expect(refusedStart.status).toBe(503);
      expect(refusedStart.body.detail).toBe(
        'Redis (the activity log) is unreachable: the session did not change, but the write of its ' +
          'activity items went out without an answer, so they may appear; retry later',
      );
      await eventually(
        () => invocations(session, 'ingest', 'backing-off'),
        (rows) => rows.length > 0,
      );
      // Gone while the first event's items are on their way (SIGKILL ends a stopped process too).
      await redis().kill();

      await probesWhileRedisIsDown();
      // Refused at once, naming Redis, and never applied: a new event, and a call that would otherwise wait behind the acknowledged ones.
      const refused = [
        await atProcess(0).post('/v1/events', failed(session, 'refused')),
        await atProcess(1).post('/v1/assistant/trigger/evaluate', {
          session_id: session,
          signals: { errors: ['a', 'b'] },
        }),
      ];
      for (const answer of refused) {
        expect(answer.status).toBe(503);
        expect(answer.body.detail).toBe('Redis (the activity log) is unreachable: nothing was applied; retry later');
      }
      // A read waits its turn behind them: answered within the bound, naming what it waits for.
      const readStarted = Date.now();
      const read = await atProcess(0).get(`/api/sessions/${session}`);
      expect(Date.now() - readStarted).toBeLessThan(PROMPT_MS);
      expect(read.status).toBe(503);
      expect(read.body.detail).toBe('Redis (the activity log) is unreachable: nothing could be read; retry later');

      await redisBack();
      await allRun([session]);
      const expected = ['welcome', ...queued];
      // Once each in the shared stream, in the order acknowledged; nothing refused.
      const stored = await streamItemsOf(session);
      expect(eventScreens(stored)).toEqual(expected);
      expect(stored.filter((item) => item.kind === 'trigger' || item.kind === 'session_start')).toEqual([]);
      // Once each on a reader of either process, which stayed connected through the outage (opened after the first event).
      for (const reader of readers) {
        await reader.until((client) => client.items.length >= queued.length, RECOVERY_MS);
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(reader.items.map((item) => item.payload.screen)).toEqual(queued);
        reader.close();
      }
      expect((await atProcess(1).activityOf(session, 'event')).map((item) => item.payload.screen)).toEqual(expected);
      // Applied once each: the session counts five failures of the field, and holds the last screen.
      const held = await get(`/api/sessions/${session}`);
      expect(held.status).toBe(200);
      expect(held.body).toMatchObject({ screen: 'queued_4', retry_counts: { pan: queued.length } });
      expect((await invocations(session, 'ingest', 'completed')).length).toBe(queued.length + 1);
    },
    120_000,
  );

  it('Redis killed with SIGKILL under a load of events: every acknowledged one recorded once, every refused one never', async () => {
    const sessions = ['w0', 'w1', 'w2', 'w3'];
    const readers = await Promise.all(
      [0, 1].map((index) => SseTestClient.open(`${processUrl(index)}/api/activity/stream?kind=event`)),
    );
    await Promise.all(readers.map((reader) => reader.until((client) => client.retry !== undefined, 10_000)));
    const acknowledged = new Map<string, string[]>(sessions.map((id) => [id, []]));
    const refused = new Map<string, string[]>(sessions.map((id) => [id, []]));
    let taken = 0;
    let killed: Promise<void> | undefined;
    await Promise.all(
      sessions.map(async (sessionId) => {
        for (let index = 0; index < 60; index += 1) {
          const screen = `${sessionId}_${index}`;
          // Mid-load: the processes still take events while Redis goes, until they see their connection drop.
          if (taken >= 40 && !killed) killed = redis().kill();
          const answer = await atProcess(index % 2).post('/v1/events', failed(sessionId, screen), {
            'idempotency-key': screen,
          });
          if (answer.status === 200) {
            taken += 1;
            acknowledged.get(sessionId)!.push(screen);
          } else {
            expect(answer.status).toBe(503);
            expect(answer.body.detail).toBe(
              'Redis (the activity log) is unreachable: nothing was applied; retry later',
            );
            refused.get(sessionId)!.push(screen);
          }
        }
      }),
    );
    await killed;
    expect([...refused.values()].flat().length).toBeGreaterThan(0);
    await probesWhileRedisIsDown();

    await redisBack();
    await allRun(sessions);
    for (const sessionId of sessions) {
      const expected = acknowledged.get(sessionId)!;
      expect(eventScreens(await streamItemsOf(sessionId))).toEqual(expected);
      for (const reader of readers) {
        await reader.until(
          (client) => client.items.filter((item) => item.session_id === sessionId).length >= expected.length,
          RECOVERY_MS,
        );
      }
      const session = await get(`/api/sessions/${sessionId}`);
      expect(session.body).toMatchObject({ screen: expected.at(-1), retry_counts: { pan: expected.length } });
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const reader of readers) {
      for (const sessionId of sessions)
        expect(reader.items.filter((item) => item.session_id === sessionId).map((item) => item.payload.screen)).toEqual(
          acknowledged.get(sessionId),
        );
      reader.close();
    }
  }, 120_000);
});
