import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { LocalCluster } from '../scripts/cluster/local-cluster.js';
import { startLocalCluster } from '../scripts/cluster/local-cluster.js';
import type { RedisServer } from '../scripts/cluster/redis-server.js';
import { startRedis } from '../scripts/cluster/redis-server.js';
import { clusterCalls } from './cluster-calls.js';

/** Short enough to come due while the cluster is down, long enough to be pending when it stops. */
const REENGAGEMENT_SECONDS = 6;
/** A delayed call runs at or after its time; on a shared 2-core machine allow this much lateness. */
const LATE_MS = 20_000;

const dataDir = mkdtempSync(join(tmpdir(), 'cluster-restart-'));
/** As npm run cluster keeps it: Redis's AOF in the cluster's data directory. */
const redisDir = join(dataDir, 'redis');
mkdirSync(redisDir);
let redis: RedisServer | undefined;
let cluster: LocalCluster | undefined;
const options = () => ({
  redisUrl: redis!.url,
  processes: 1,
  dataDir,
  logFile: join(dataDir, 'cluster.log'),
  env: { REENGAGEMENT_INACTIVITY_SECONDS: String(REENGAGEMENT_SECONDS) },
});
const { post, get, activityOf, invocations } = clusterCalls(() => cluster!);

afterAll(async () => {
  await cluster?.stop();
  await redis?.stop();
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

describe('a local cluster stopped and started again on its data (npm run cluster without --fresh)', () => {
  it('finds its sessions and activity again, at the same addresses, and a timer that came due while it was down fires once', async () => {
    redis = await startRedis({ dir: redisDir });
    cluster = await startLocalCluster(options());
    const first = { ingress: cluster.restate.ingressUrl, deployment: cluster.releases[0]!.uri };
    const sessionId = 'kept-across-restart';
    expect(
      (await post('/v1/events', { session_id: sessionId, user_id: 'u', event: 'screen_view', screen: 'pan_details' }))
        .status,
    ).toBe(200);
    // Named requests, answered before the stop: copies after the restart get the same answers (Restate's idempotency keys).
    const namedEvent = {
      session_id: sessionId,
      event: 'validation_failed',
      screen: 'pan_details',
      component_id: 'pan',
      errors: ['pan_invalid'],
      properties: { field_status: 'ERROR', semantic_slot: 'pan' },
    };
    const eventAnswer = await post('/v1/events', namedEvent, { 'idempotency-key': 'restart-event-1' });
    expect(eventAnswer.status).toBe(200);
    const dropoff = await post(
      '/api/dropoff/register',
      { session_id: sessionId, reason: 'app_backgrounded' },
      { 'idempotency-key': 'restart-dropoff-1' },
    );
    expect(dropoff.status).toBe(200);
    const armedAt = Date.now();
    // The answer comes before the activity is read back everywhere: wait for it, then stop everything, Redis too.
    await vi.waitFor(async () => expect(await activityOf(sessionId, 'dropoff_registered')).toHaveLength(1), {
      timeout: 15_000,
      interval: 200,
    });
    await cluster.stop();
    cluster = undefined;
    const { port } = redis;
    await redis.stop();
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, armedAt + REENGAGEMENT_SECONDS * 1000 - Date.now())),
    );

    // The wake is due as Restate starts: it calls the deployment before the service process answers.
    redis = await startRedis({ port, dir: redisDir });
    cluster = await startLocalCluster(options());
    expect({ ingress: cluster.restate.ingressUrl, deployment: cluster.releases[0]!.uri }).toEqual(first);
    const session = await get(`/api/sessions/${sessionId}`);
    expect(session.status).toBe(200);
    expect(session.body.screen).toBe('pan_details');
    expect((await activityOf(sessionId, 'dropoff_registered')).map((item) => item.payload.reason)).toEqual([
      'app_backgrounded',
    ]);
    // The copies, the event's keys in another order: the first answers, and nothing applied twice.
    const reorderedEvent = Object.fromEntries(Object.entries(namedEvent).reverse());
    const eventCopy = await post('/v1/events', reorderedEvent, { 'idempotency-key': 'restart-event-1' });
    expect(eventCopy.status).toBe(200);
    expect(eventCopy.body).toEqual(eventAnswer.body);
    const dropoffCopy = await post(
      '/api/dropoff/register',
      { session_id: sessionId, reason: 'app_backgrounded' },
      { 'idempotency-key': 'restart-dropoff-1' },
    );
    expect(dropoffCopy).toEqual(dropoff);
    expect((await get(`/api/sessions/${sessionId}`)).body.retry_counts).toEqual({ pan: 1 });
    expect(await activityOf(sessionId, 'dropoff_registered')).toHaveLength(1);
    expect(await activityOf(sessionId, 'event')).toHaveLength(2);
    await vi.waitFor(
      async () => {
        const fired = (await activityOf(sessionId, 'reengagement')).filter((item) => item.payload.source === 'timer');
        expect(fired).toHaveLength(1);
      },
      { timeout: LATE_MS, interval: 250 },
    );
    // Once: the wakes that ran after the restart, and what they recorded, stay at one.
    await vi.waitFor(async () => expect(await invocations(sessionId, 'wake', 'running')).toEqual([]), {
      timeout: 15_000,
      interval: 250,
    });
    expect(
      (await activityOf(sessionId, 'reengagement')).filter((item) => item.payload.source === 'timer'),
    ).toHaveLength(1);
  }, 300_000);
});
