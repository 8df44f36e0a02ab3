import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { TalliedCounter } from '../../src/metrics/tallied-counter.js';

const valueOf = async (counter: TalliedCounter<'kind'>, kind: string) =>
  (await counter.get()).values.find((sample) => sample.labels.kind === kind)?.value;

describe('TalliedCounter', () => {
  it('reports what was tallied when read, once, and keeps counting after', async () => {
    const registry = new Registry();
    const counter = new TalliedCounter({
      name: 'things_total',
      help: 'things',
      labelName: 'kind',
      registers: [registry],
    });
    counter.tally('event');
    counter.tally('event');
    counter.tally('trigger');
    expect(await valueOf(counter, 'event')).toBe(2);
    // A second read folds nothing new in: no double counting.
    expect(await valueOf(counter, 'event')).toBe(2);
    counter.tally('event');
    expect(await registry.metrics()).toContain('things_total{kind="event"} 3');
    expect(await valueOf(counter, 'trigger')).toBe(1);
  });

  it('is reset like any counter', async () => {
    const counter = new TalliedCounter({ name: 'reset_total', help: 'things', labelName: 'kind', registers: [] });
    counter.tally('event');
    await counter.get();
    counter.reset();
    counter.tally('event');
    expect(await valueOf(counter, 'event')).toBe(1);
    // What was tallied before a reset and never read is gone with it.
    counter.tally('event');
    counter.reset();
    counter.tally('event');
    expect(await valueOf(counter, 'event')).toBe(1);
  });
});
