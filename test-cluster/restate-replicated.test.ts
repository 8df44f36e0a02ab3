import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { productionExample, restateNodeToml } from '../scripts/cluster/restate-config.js';
import { ensureRestateServer } from '../scripts/cluster/restate-server.js';
import { clusterCalls } from './cluster-calls.js';
import { suiteCluster } from './fixtures/suite-cluster.js';

/** Short timers by configuration (Restate's clock is the real one), long enough to be pending when the node dies. */
const COOLDOWN_SECONDS = 4;
const REENGAGEMENT_SECONDS = 5;
/** How long the cluster may take to give a dead node's partitions to the survivors, on a shared 2-core machine. */
const RECOVERY_MS = 30_000;
const LOAD_SESSIONS = 6;
const EVENTS_PER_SESSION = 30;

const { cluster } = suiteCluster({
  name: 'cluster-replicated',
  processes: 2,
  restateNodes: 3,
  cooldownSeconds: COOLDOWN_SECONDS,
  env: () => ({ REENGAGEMENT_INACTIVITY_SECONDS: String(REENGAGEMENT_SECONDS) }),
  startTimeoutMs: 240_000,
});
const { post, activityOf, stateOf, invocations, get } = clusterCalls(cluster);

/**
 * Sends one event until it is acknowledged, as a client following docs/how-to/production.md does: the same
 * Idempotency-Key on every attempt, so an attempt that reached Restate before its node died is
 * answered, not applied again. Returns the attempts it took.
 */
async function deliver(sessionId: string, screen: string): Promise<{ attempts: number; at: number }> {
  const deadline = Date.now() + RECOVERY_MS;
  for (let attempts = 1; ; attempts += 1) {
    const answer = await post(
      '/v1/events',
      { session_id: sessionId, event: 'screen_view', screen },
      { 'idempotency-key': `${sessionId}:${screen}` },
    ).catch(() => undefined);
    if (answer?.status === 200) return { attempts, at: Date.now() };
    if (Date.now() > deadline)
      throw new Error(
        `${sessionId} ${screen}: not acknowledged within ${RECOVERY_MS} ms (last answer ${JSON.stringify(answer)})`,
      );
    // Retry-After would say 5 s; this client retries sooner to measure how soon the cluster takes commands again.
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Restate's SQL fans out to every partition: while a dead node's partitions move, a query may fail. */
const settled = <T>(read: () => Promise<T>) => read().catch(() => undefined);

describe('a 3-node replicated Restate cluster, one node killed with SIGKILL under load', () => {
  it('loses no acknowledged event, applies none twice, and fires every pending timer once', async () => {
    expect(cluster().restate.nodes).toHaveLength(3);
    // Timers pending across the kill: cooldowns (a trigger fired) and reengagements (a drop-off registered).
    const cooling = ['cool-0', 'cool-1', 'cool-2'];
    const away = ['away-0', 'away-1', 'away-2'];
    for (const sessionId of [...cooling, ...away]) await deliver(sessionId, 'pan_details');
    for (const sessionId of cooling) {
      const fired = await post('/v1/assistant/trigger/evaluate', {
        session_id: sessionId,
        signals: { errors: ['pan_invalid', 'pan_invalid_format'] },
      });
      expect(fired.body.trigger).toBe(true);
    }
    const armedAt = Date.now();
    for (const sessionId of away)
      expect((await post('/api/dropoff/register', { session_id: sessionId, reason: 'app_backgrounded' })).status).toBe(
        200,
      );

    const victim = cluster().restate.nodes[1]!;
    let killedAt = 0;
    const sessions = Array.from({ length: LOAD_SESSIONS }, (_, index) => `load-${index}`);
    const acknowledged = new Map<string, string[]>(sessions.map((id) => [id, []]));
    const firstAfterKill = new Map<string, number>();
    let retried = 0;
    const load = sessions.map(async (sessionId, sessionIndex) => {
      for (let index = 0; index < EVENTS_PER_SESSION; index += 1) {
        if (sessionIndex === 0 && index === EVENTS_PER_SESSION / 3) {
          await victim.kill('SIGKILL');
          killedAt = Date.now();
        }
        const screen = `step_${index}`;
        const sent = await deliver(sessionId, screen);
        acknowledged.get(sessionId)!.push(screen);
        retried += sent.attempts - 1;
        if (killedAt > 0 && !firstAfterKill.has(sessionId)) firstAfterKill.set(sessionId, sent.at);
      }
    });
    await Promise.all(load);
    expect(killedAt).toBeGreaterThan(0);
    const recoveryMs = Math.max(...[...firstAfterKill.values()].map((at) => at - killedAt));
    const total = [...acknowledged.values()].reduce((sum, screens) => sum + screens.length, 0);
    process.stdout.write(
      `replicated cluster: ${total} events acknowledged, ${retried} attempts retried; every session took an event again ${recoveryMs} ms after the SIGKILL of ${victim.name}\n`,
    );
    expect(total).toBe(LOAD_SESSIONS * EVENTS_PER_SESSION);

    for (const sessionId of sessions) {
      // The session holds the last (a read waits its turn behind the events sent one-way before it).
      expect((await get(`/api/sessions/${sessionId}`)).body.screen).toBe(`step_${EVENTS_PER_SESSION - 1}`);
      // Every acknowledged event once, in the order sent, once this process has read back what the invocations wrote.
      await vi.waitFor(
        async () => {
          if ((await activityOf(sessionId, 'event')).length < acknowledged.get(sessionId)!.length)
            throw new Error(`${sessionId}: activity not read back yet`);
        },
        { timeout: 10_000, interval: 100 },
      );
      const recorded = (await activityOf(sessionId, 'event')).map((item) => item.payload.screen);
      expect(recorded).toEqual(acknowledged.get(sessionId));
    }

    // Each cooldown ends once, at or after its time, through one wake.
    for (const sessionId of cooling) {
      await vi.waitFor(
        async () => {
          const kept = await settled(() => stateOf<{ value: { trigger: string } }>(sessionId, 'session'));
          if (kept?.value.trigger !== 'ready') throw new Error(`${sessionId}: cooldown not over`);
        },
        { timeout: COOLDOWN_SECONDS * 1000 + RECOVERY_MS, interval: 250 },
      );
      expect(Date.now() - armedAt).toBeGreaterThanOrEqual(COOLDOWN_SECONDS * 1000 - 1000);
      await vi.waitFor(
        async () => {
          if ((await settled(() => invocations(sessionId, 'wake', 'completed')))?.length !== 1)
            throw new Error(`${sessionId}: no completed wake`);
        },
        { timeout: 10_000, interval: 250 },
      );
    }
    // Each reengagement fires once, at or after its time, recording one item.
    for (const sessionId of away) {
      await vi.waitFor(
        async () => {
          const timed = (await activityOf(sessionId, 'reengagement')).filter((item) => item.payload.source === 'timer');
          if (timed.length === 0) throw new Error(`${sessionId}: reengagement not fired`);
        },
        { timeout: REENGAGEMENT_SECONDS * 1000 + RECOVERY_MS, interval: 250 },
      );
      const timed = (await activityOf(sessionId, 'reengagement')).filter((item) => item.payload.source === 'timer');
      expect(timed).toHaveLength(1);
      expect(Date.parse(timed[0]!.timestamp)).toBeGreaterThanOrEqual(armedAt - 1000 + REENGAGEMENT_SECONDS * 1000);
    }
    // Once: no pending wake left for a reengagement that fired, so none can fire it again.
    for (const sessionId of away) {
      const pending = await invocations(sessionId, 'wake', 'scheduled');
      const wakes = (await stateOf<{ wakes?: number[] }>(sessionId, 'session'))?.wakes ?? [];
      expect(wakes.every((deadline) => deadline > armedAt + REENGAGEMENT_SECONDS * 1000)).toBe(true);
      expect(pending.length).toBe(wakes.length);
    }
  }, 180_000);
});

describe('the restate.toml docs/how-to/production.md shows for production', () => {
  it('is taken by the Restate server as written: every key it sets comes back from --dump-config', () => {
    const dir = mkdtempSync(join(tmpdir(), 'restate-toml-'));
    const file = join(dir, 'restate.toml');
    writeFileSync(file, restateNodeToml(productionExample()));
    const dumped = spawnSync(ensureRestateServer(), ['--config-file', file, '--dump-config'], { encoding: 'utf8' });
    expect(dumped.status).toBe(0);
    const sectionsOf = (toml: string) => {
      const entries = new Set<string>();
      let section = '';
      for (const raw of toml.split('\n')) {
        const line = raw.replace(/\s+#.*$/, '').trim();
        const header = /^\[(.+)\]$/.exec(line);
        if (header) section = header[1]!;
        else if (line.includes(' = ')) entries.add(`[${section}] ${line}`);
      }
      return entries;
    };
    const taken = sectionsOf(dumped.stdout);
    // `addresses` is dumped over several lines: compared as the addresses it holds.
    for (const entry of sectionsOf(restateNodeToml(productionExample()))) {
      if (entry.startsWith('[metadata-client] addresses')) {
        for (const address of productionExample().metadataAddresses)
          expect(dumped.stdout).toContain(JSON.stringify(address));
      } else expect(taken).toContain(entry);
    }
  });
});
