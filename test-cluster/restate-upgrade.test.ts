import { describe, expect, it, vi } from 'vitest';
import { STATE_MIGRATIONS, stateVersionOf } from '../src/cluster/state-versions.js';
import { clusterCalls } from './cluster-calls.js';
import { suiteCluster } from './fixtures/suite-cluster.js';

/** Short timers (Restate's clock is the real one), long enough to be pending while the next release starts and the first is retired (a busy machine takes 10-20 s). */
const COOLDOWN_SECONDS = 25;
const REENGAGEMENT_SECONDS = 30;
/** A delayed call runs at or after its time; on a shared 2-core machine allow this much lateness. */
const LATE_MS = 15_000;
const CURRENT = stateVersionOf(STATE_MIGRATIONS);

const { cluster } = suiteCluster({
  name: 'cluster-upgrade',
  processes: 1,
  release: 'v1',
  cooldownSeconds: COOLDOWN_SECONDS,
  env: () => ({ REENGAGEMENT_INACTIVITY_SECONDS: String(REENGAGEMENT_SECONDS) }),
  startTimeoutMs: 180_000,
});
const { post, activityOf, stateOf, invocations, get } = clusterCalls(cluster);

interface Kept {
  state_version?: number;
  value: { trigger: string };
  summary: { screen: string | null; created_at: number };
}

/** The object's state as Restate holds it: each key's bytes. */
const rawState = async (sessionId: string): Promise<Record<string, Buffer>> => {
  const rows = await cluster().restate.query<{ key: string; value: string }>(
    `SELECT key, value FROM state WHERE service_name = 'KycSession' AND service_key = '${sessionId}'`,
  );
  return Object.fromEntries(rows.map((row) => [row.key, Buffer.from(row.value, 'hex')]));
};

/** Replaces the object's state through Restate's admin API, as an operator's tool would (applied shortly after). */
const replaceState = async (sessionId: string, state: Record<string, Buffer>): Promise<void> => {
  const modified = await fetch(`${cluster().restate.adminUrl}services/KycSession/state`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      object_key: sessionId,
      new_state: Object.fromEntries(Object.entries(state).map(([key, bytes]) => [key, [...bytes]])),
    }),
  });
  expect(modified.status).toBeLessThan(300);
};

describe('rolling a release forward with timers pending (real Restate server)', () => {
  it('a session an earlier release kept as plain JSON is read as it is, and kept deflated from its next write', async () => {
    const sessionId = 'up-json';
    expect(
      (await post('/v1/events', { session_id: sessionId, user_id: 'u', event: 'screen_view', screen: 'pan_details' }))
        .status,
    ).toBe(200);
    await vi.waitFor(async () => expect((await rawState(sessionId)).session?.[0]).toBe(0x78), {
      timeout: 15_000,
      interval: 200,
    });
    // Rewritten as a release before deflating kept it: the session value as JSON text, the other keys as they are.
    const before = await rawState(sessionId);
    const kept = (await stateOf<Kept>(sessionId, 'session'))!;
    const legacy = { ...before, session: Buffer.from(JSON.stringify(kept)) };
    await replaceState(sessionId, legacy);
    await vi.waitFor(async () => expect((await rawState(sessionId)).session?.[0]).toBe('{'.charCodeAt(0)), {
      timeout: 15_000,
      interval: 200,
    });
    expect((await get(`/api/sessions/${sessionId}`)).body.screen).toBe('pan_details');
    // The next event runs on it, and its write keeps the session deflated.
    expect(
      (await post('/v1/events', { session_id: sessionId, user_id: 'u', event: 'screen_view', screen: 'address' }))
        .status,
    ).toBe(200);
    expect((await get(`/api/sessions/${sessionId}`)).body.screen).toBe('address');
    expect((await rawState(sessionId)).session?.[0]).toBe(0x78);
    // The same session went on (not one begun anew): it was created when the first event came.
    expect((await stateOf<Kept>(sessionId, 'session'))?.summary).toMatchObject({
      screen: 'address',
      created_at: kept.summary.created_at,
    });
  }, 60_000);

  it('a session value whose bytes no longer read back is discarded: the session begins anew, its turn not held', async () => {
    const sessionId = 'up-damaged';
    expect(
      (await post('/v1/events', { session_id: sessionId, user_id: 'u', event: 'screen_view', screen: 'pan_details' }))
        .status,
    ).toBe(200);
    await vi.waitFor(async () => expect((await rawState(sessionId)).session?.[0]).toBe(0x78), {
      timeout: 15_000,
      interval: 200,
    });
    const kept = (await stateOf<Kept>(sessionId, 'session'))!;
    // A zlib header and then bytes that inflate to nothing.
    const damaged = Buffer.from([0x78, 0x01, 0xff, 0xff, 0x00]);
    await replaceState(sessionId, { ...(await rawState(sessionId)), session: damaged });
    await vi.waitFor(async () => expect((await rawState(sessionId)).session).toEqual(damaged), {
      timeout: 15_000,
      interval: 200,
    });
    expect((await get(`/api/sessions/${sessionId}`)).status).toBe(404);
    expect(
      (await post('/v1/events', { session_id: sessionId, user_id: 'u', event: 'screen_view', screen: 'address' }))
        .status,
    ).toBe(200);
    expect((await get(`/api/sessions/${sessionId}`)).body.screen).toBe('address');
    // A new session, kept deflated again.
    expect((await rawState(sessionId)).session?.[0]).toBe(0x78);
    expect((await stateOf<Kept>(sessionId, 'session'))!.summary.created_at).toBeGreaterThan(kept.summary.created_at);
  }, 60_000);

  it('the next release registers its own deployment, migrates each kept state once, and fires every pending timer once', async () => {
    const [v1] = cluster().releases;
    const cooling = ['up-cool-0', 'up-cool-1'];
    const away = ['up-away-0', 'up-away-1'];
    for (const sessionId of [...cooling, ...away])
      expect(
        (await post('/v1/events', { session_id: sessionId, user_id: 'u', event: 'screen_view', screen: 'pan_details' }))
          .status,
      ).toBe(200);
    for (const sessionId of cooling) {
      expect(
        (
          await post('/v1/assistant/trigger/evaluate', {
            session_id: sessionId,
            signals: { errors: ['pan_invalid', 'pan_invalid_format'] },
          })
        ).body.trigger,
      ).toBe(true);
    }
    const armedAt = Date.now();
    for (const sessionId of away)
      expect((await post('/api/dropoff/register', { session_id: sessionId, reason: 'app_backgrounded' })).status).toBe(
        200,
      );
    // Written by v1 in its shape.
    for (const sessionId of [...cooling, ...away]) {
      const kept = await stateOf<Kept>(sessionId, 'session');
      expect(kept?.state_version).toBe(CURRENT);
      expect(await stateOf(sessionId, 'kept_since')).toBeUndefined();
    }

    // The next release: its own processes and URI, registered beside v1's (not over it).
    const v2 = await cluster().release('v2', { processes: 1, entry: 'test-cluster/fixtures/release-next.ts' });
    expect(v2.deploymentId).not.toBe(v1!.deploymentId);
    expect((await cluster().restate.deployments()).map((deployment) => deployment.id).sort()).toEqual(
      [v1!.deploymentId, v2.deploymentId].sort(),
    );
    // The pending wakes have not started: nothing is pinned to v1, which is retired before they fire.
    await cluster().retire(v1!);
    expect(Date.now() - armedAt).toBeLessThan(COOLDOWN_SECONDS * 1000);
    expect((await cluster().restate.deployments()).map((deployment) => deployment.id)).toEqual([v2.deploymentId]);

    // A command reaching a v1 session on v2 finds it migrated first.
    const touched = cooling[1]!;
    expect(
      (await post('/v1/events', { session_id: touched, event: 'screen_view', screen: 'aadhaar_otp' })).status,
    ).toBe(200);
    expect((await get(`/api/sessions/${touched}`)).body.screen).toBe('aadhaar_otp');

    for (const sessionId of cooling) {
      await vi.waitFor(
        async () => {
          if ((await stateOf<Kept>(sessionId, 'session'))?.value.trigger !== 'ready')
            throw new Error(`${sessionId}: cooldown not over`);
        },
        { timeout: COOLDOWN_SECONDS * 1000 + LATE_MS, interval: 250 },
      );
      expect(Date.now() - armedAt).toBeGreaterThanOrEqual(COOLDOWN_SECONDS * 1000 - 1000);
    }
    for (const sessionId of away) {
      await vi.waitFor(
        async () => {
          if ((await activityOf(sessionId, 'reengagement')).every((item) => item.payload.source !== 'timer'))
            throw new Error(`${sessionId}: reengagement not fired`);
        },
        { timeout: REENGAGEMENT_SECONDS * 1000 + LATE_MS, interval: 250 },
      );
    }
    for (const sessionId of [...cooling, ...away]) {
      // Fired once, by v2: every wake that ran is pinned to v2's deployment.
      const wakes = await vi.waitFor(
        async () => {
          const completed = await invocations(sessionId, 'wake', 'completed');
          if (completed.length === 0) throw new Error(`${sessionId}: no completed wake yet`);
          return completed;
        },
        { timeout: 10_000, interval: 250 },
      );
      expect(wakes).toHaveLength(1);
      expect(wakes[0]!.pinned_deployment_id).toBe(v2.deploymentId);
      // Migrated, once: the new version, the new key, the rest as v1 kept it.
      const kept = await stateOf<Kept>(sessionId, 'session');
      expect(kept?.state_version).toBe(CURRENT + 1);
      expect(await stateOf(sessionId, 'kept_since')).toEqual({ state_version: CURRENT, migrations: 1 });
      expect(kept?.summary.screen).toBe(sessionId === touched ? 'aadhaar_otp' : 'pan_details');
    }
    for (const sessionId of away) {
      const timed = (await activityOf(sessionId, 'reengagement')).filter((item) => item.payload.source === 'timer');
      expect(timed).toHaveLength(1);
      expect(Date.parse(timed[0]!.timestamp)).toBeGreaterThanOrEqual(armedAt - 1000 + REENGAGEMENT_SECONDS * 1000);
    }
  }, 180_000);
});
