import { describe, expect, it } from 'vitest';
import {
  BUSY_LOOP_UTILIZATION,
  MIN_GROWTH_BYTES,
  MIN_RELEASED_BYTES,
  MIN_RSS_BYTES,
  MIN_TRIM_INTERVAL_MS,
  SETTLED_BYTES,
  TrimDecision,
  shouldTrim,
} from '../../src/integrations/heap-trim.js';
import { MemoryBudget } from '../../src/actor-system/memory-budget.js';

const MiB = 2 ** 20;
/** What the budget counted 100,000 hibernated sessions at before they left memory. */
const FLOOD_LEFT = 700 * MiB;
/** The flood's settled process: 600 MiB resident. */
const FLOODED = { rss: 600 * MiB };

describe('heap trim: when a full collection gives back what a burst left', () => {
  it('collects once a flood of sessions has left memory and stopped leaving', () => {
    expect(shouldTrim(FLOODED, MIN_TRIM_INTERVAL_MS, FLOOD_LEFT, 0)).toBe(true);
    expect(shouldTrim(FLOODED, MIN_TRIM_INTERVAL_MS, FLOOD_LEFT, SETTLED_BYTES - 1)).toBe(true);
  });

  it('waits while sessions are still leaving memory: a trim then would leave the rest for the next minute', () => {
    expect(shouldTrim(FLOODED, MIN_TRIM_INTERVAL_MS, FLOOD_LEFT, SETTLED_BYTES)).toBe(false);
    expect(shouldTrim(FLOODED, MIN_TRIM_INTERVAL_MS, FLOOD_LEFT, 300 * MiB)).toBe(false);
  });

  it('leaves a small process alone: too little to give back to be worth a pause', () => {
    expect(shouldTrim({ rss: MIN_RSS_BYTES - 1 }, MIN_TRIM_INTERVAL_MS, FLOOD_LEFT, 0)).toBe(false);
    expect(shouldTrim({ rss: MIN_RSS_BYTES }, MIN_TRIM_INTERVAL_MS, FLOOD_LEFT, 0)).toBe(true);
  });

  it('leaves a service under steady load alone: however large its heap, no sessions left memory', () => {
    expect(shouldTrim(FLOODED, MIN_TRIM_INTERVAL_MS, 0, 0)).toBe(false);
    expect(shouldTrim(FLOODED, MIN_TRIM_INTERVAL_MS, MIN_RELEASED_BYTES - 1, 0)).toBe(false);
    expect(shouldTrim(FLOODED, MIN_TRIM_INTERVAL_MS, MIN_RELEASED_BYTES, 0)).toBe(true);
  });

  it('collects at most once a minute', () => {
    expect(shouldTrim(FLOODED, MIN_TRIM_INTERVAL_MS - 1, FLOOD_LEFT, 0)).toBe(false);
  });
});

describe('heap trim: a rolling flood', () => {
  it(
    'counts what left memory added up: sessions that came and went a few seconds apart, never ' +
      '64 MiB held at once, still call for a trim once they stop',
    () => {
      const budget = new MemoryBudget(1024);
      const decision = new TrimDecision(budget.releasedBytes());
      const checkEveryMs = 15_000;
      let now = 0;
      let trims = 0;
      let peakHeld = 0;
      // 50,000 sessions, 3,000 a 15 s check, each leaving memory within the next check.
      for (let made = 0; made < 50_000; now += checkEveryMs) {
        const batch = Array.from({ length: 3_000 }, (_, i) => `s-${made + i}`);
        made += batch.length;
        for (const id of batch) budget.charge(budget.account(id), 700);
        peakHeld = Math.max(peakHeld, budget.use().used_bytes);
        for (const id of batch) budget.close(id);
        if (decision.check(FLOODED, budget.releasedBytes(), now)) trims += 1;
      }
      expect(peakHeld).toBeLessThan(MIN_RELEASED_BYTES);
      expect(trims).toBe(0);
      // The flood has stopped: the next check trims, once.
      expect(decision.check(FLOODED, budget.releasedBytes(), now)).toBe(true);
      expect(decision.check(FLOODED, budget.releasedBytes(), now + checkEveryMs)).toBe(false);
    },
  );
});

describe('heap trim: a second wave after a trim', () => {
  it(
    'trims again once the sessions still held at the first trim have left, read on the RSS: ' +
      "V8's committed heap had fallen to 97 MB with 358 MB of freed pages pooled outside it",
    () => {
      const budget = new MemoryBudget(1024);
      const decision = new TrimDecision(budget.releasedBytes());
      const checkEveryMs = 15_000;
      const ids = (from: number, count: number) => Array.from({ length: count }, (_, i) => `s-${from + i}`);
      // 100,000 sessions; 54,600 leave memory at the cap, 45,400 stay until they have been idle a minute.
      for (const id of ids(0, 100_000)) budget.charge(budget.account(id), 700);
      for (const id of ids(0, 54_600)) budget.close(id);
      let now = 0;
      expect(decision.check(FLOODED, budget.releasedBytes(), now)).toBe(false);
      now += checkEveryMs;
      expect(decision.check(FLOODED, budget.releasedBytes(), now)).toBe(true);
      // The rest leave over the next three checks.
      for (let wave = 0; wave < 3; wave += 1) {
        for (const id of ids(54_600 + wave * 15_134, wave === 2 ? 15_132 : 15_134)) budget.close(id);
        now += checkEveryMs;
        expect(decision.check(FLOODED, budget.releasedBytes(), now)).toBe(false);
      }
      expect(budget.use().sessions).toBe(0);
      // What the flood's run read then: 607 MiB resident, 97 MB of it V8's committed heap.
      const settled = { rss: 607 * MiB };
      now += checkEveryMs;
      expect(decision.check(settled, budget.releasedBytes(), now)).toBe(true);
    },
  );
});

describe('heap trim: a burst that no session leaving explains', () => {
  const checkEveryMs = 15_000;
  const at = (rssMiB: number) => ({ rss: rssMiB * MiB });

  it(
    'trims once the process has grown by a burst and stopped growing: answers built for clients ' +
      'that never read them grew RSS from 190 to 516 MiB with every session still held',
    () => {
      const decision = new TrimDecision(0);
      let now = MIN_TRIM_INTERVAL_MS;
      expect(decision.check(at(190), 0, now)).toBe(false);
      // Still growing: each check reads more than SETTLED_BYTES over the last.
      for (const rss of [300, 420, 516]) {
        now += checkEveryMs;
        expect(decision.check(at(rss), 0, now)).toBe(false);
      }
      now += checkEveryMs;
      expect(decision.check(at(520), 0, now)).toBe(true);
      // What the trim gave back is the new lowest reading; the next burst is measured from it.
      now += checkEveryMs;
      expect(decision.check(at(200), 0, now)).toBe(false);
      now += checkEveryMs;
      expect(decision.check(at(200 + MIN_GROWTH_BYTES / MiB - 1), 0, now)).toBe(false);
      now += MIN_TRIM_INTERVAL_MS;
      expect(decision.check(at(200 + MIN_GROWTH_BYTES / MiB), 0, now)).toBe(true);
    },
  );

  it('does not trim again for growth that stays: sessions held give nothing back, so the next trim waits for more growth', () => {
    const decision = new TrimDecision(0);
    let now = MIN_TRIM_INTERVAL_MS;
    expect(decision.check(at(190), 0, now)).toBe(false);
    now += checkEveryMs;
    expect(decision.check(at(400), 0, now)).toBe(false);
    now += checkEveryMs;
    expect(decision.check(at(400), 0, now)).toBe(true);
    // The trim gave nothing back: ten minutes at 400 MiB trim no more.
    for (let check = 0; check < 40; check += 1) {
      now += checkEveryMs;
      expect(decision.check(at(400), 0, now)).toBe(false);
    }
  });

  it('leaves a small process alone and trims at most once a minute', () => {
    const small = new TrimDecision(0);
    expect(small.check(at(100), 0, MIN_TRIM_INTERVAL_MS)).toBe(false);
    expect(small.check(at(MIN_RSS_BYTES / MiB - 1), 0, MIN_TRIM_INTERVAL_MS + checkEveryMs)).toBe(false);
    const recent = new TrimDecision(0);
    expect(recent.check(at(190), 0, MIN_TRIM_INTERVAL_MS)).toBe(false);
    expect(recent.check(at(400), 0, MIN_TRIM_INTERVAL_MS + checkEveryMs)).toBe(false);
    expect(recent.check(at(400), 0, MIN_TRIM_INTERVAL_MS + 2 * checkEveryMs)).toBe(true);
    expect(recent.check(at(200), 0, MIN_TRIM_INTERVAL_MS + 3 * checkEveryMs)).toBe(false);
    expect(recent.check(at(500), 0, MIN_TRIM_INTERVAL_MS + 4 * checkEveryMs)).toBe(false);
    expect(recent.check(at(500), 0, MIN_TRIM_INTERVAL_MS + 5 * checkEveryMs)).toBe(false);
    expect(recent.check(at(500), 0, 2 * MIN_TRIM_INTERVAL_MS + 2 * checkEveryMs)).toBe(true);
  });
});

describe('heap trim: a burst that goes on after a trim', () => {
  it('measures the next growth from what the trim left, not from the next check: 585 MiB fell to 388 and was back at 545 by then', () => {
    const checkEveryMs = 15_000;
    const decision = new TrimDecision(0);
    let now = MIN_TRIM_INTERVAL_MS;
    expect(decision.check({ rss: 272 * MiB }, 0, now)).toBe(false);
    now += checkEveryMs;
    expect(decision.check({ rss: 585 * MiB }, 0, now)).toBe(false);
    now += checkEveryMs;
    expect(decision.check({ rss: 586 * MiB }, 0, now)).toBe(true);
    decision.trimmed({ rss: 388 * MiB });
    for (const rss of [545, 546, 536]) {
      now += checkEveryMs;
      expect(decision.check({ rss: rss * MiB }, 0, now)).toBe(false);
    }
    now += checkEveryMs;
    expect(decision.check({ rss: 536 * MiB }, 0, now)).toBe(true);
  });
});

describe('heap trim: a busy event loop', () => {
  const checkEveryMs = 15_000;

  it(
    'leaves a trim the flood called for to the first quiet check: run under an attack, the ' +
      'collection stopped the loop for a second and a fresh client waited 1.1 s',
    () => {
      const budget = new MemoryBudget(1024);
      const decision = new TrimDecision(budget.releasedBytes());
      const ids = Array.from({ length: 50_000 }, (_, i) => `s-${i}`);
      for (const id of ids) budget.charge(budget.account(id), 700);
      let now = MIN_TRIM_INTERVAL_MS;
      expect(decision.check(FLOODED, budget.releasedBytes(), now, 0.1)).toBe(false);
      for (const id of ids) budget.close(id);
      now += checkEveryMs;
      expect(decision.check(FLOODED, budget.releasedBytes(), now, 0.1)).toBe(false);
      // They have stopped leaving, but the attack goes on: two busy checks wait.
      for (const busy of [0.97, BUSY_LOOP_UTILIZATION]) {
        now += checkEveryMs;
        expect(decision.check(FLOODED, budget.releasedBytes(), now, busy)).toBe(false);
        expect(decision.deferred).toBe(true);
      }
      now += checkEveryMs;
      expect(decision.check(FLOODED, budget.releasedBytes(), now, BUSY_LOOP_UTILIZATION - 0.01)).toBe(true);
      expect(decision.deferred).toBe(false);
    },
  );

  it('defers only a trim that is called for: a busy loop with nothing to give back waits for nothing', () => {
    const decision = new TrimDecision(0);
    expect(decision.check({ rss: 190 * MiB }, 0, MIN_TRIM_INTERVAL_MS, 1)).toBe(false);
    expect(decision.deferred).toBe(false);
  });

  it('leaves a trim after growth alone while the loop is busy, too', () => {
    const decision = new TrimDecision(0);
    let now = MIN_TRIM_INTERVAL_MS;
    expect(decision.check({ rss: 190 * MiB }, 0, now, 0.9)).toBe(false);
    now += checkEveryMs;
    expect(decision.check({ rss: 520 * MiB }, 0, now, 0.9)).toBe(false);
    now += checkEveryMs;
    expect(decision.check({ rss: 521 * MiB }, 0, now, 0.9)).toBe(false);
    expect(decision.deferred).toBe(true);
    now += checkEveryMs;
    expect(decision.check({ rss: 521 * MiB }, 0, now, 0.05)).toBe(true);
  });
});
