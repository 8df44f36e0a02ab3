import { describe, expect, it } from 'vitest';
import { CommandBatch } from '../../src/actor-system/command-batch.js';

/** A batch whose turn ends when the test says so, on a clock the test moves (each delivery may take time). */
function manualBatch(budgetMs = 10) {
  const turns: (() => void)[] = [];
  const errors: unknown[] = [];
  const clock = { ms: 0 };
  const batch = new CommandBatch(
    (error) => errors.push(error),
    (drain) => turns.push(drain),
    () => clock.ms,
    budgetMs,
  );
  return {
    batch,
    errors,
    clock,
    endTurn: () => turns.splice(0).forEach((drain) => drain()),
    scheduled: () => turns.length,
  };
}

describe('CommandBatch', () => {
  it('holds the commands of a turn and delivers them together, in the order they came', () => {
    const { batch, endTurn, scheduled } = manualBatch();
    const delivered: string[] = [];
    for (const name of ['a1', 'b1', 'a2', 'c1']) batch.add(() => delivered.push(name));
    expect(delivered).toEqual([]);
    expect(scheduled()).toBe(1);
    endTurn();
    expect(delivered).toEqual(['a1', 'b1', 'a2', 'c1']);
    batch.add(() => delivered.push('next turn'));
    expect(scheduled()).toBe(1);
    endTurn();
    expect(delivered.at(-1)).toBe('next turn');
  });

  it('delivers the rest of a turn when one delivery throws, and reports the error', () => {
    const { batch, errors, endTurn } = manualBatch();
    const delivered: string[] = [];
    batch.add(() => delivered.push('before'));
    batch.add(() => {
      throw new Error('boom');
    });
    batch.add(() => delivered.push('after'));
    endTurn();
    expect(delivered).toEqual(['before', 'after']);
    expect(errors).toEqual([new Error('boom')]);
  });

  it('delivers a command added by a delivery in the same drain', () => {
    const { batch, endTurn } = manualBatch();
    const delivered: string[] = [];
    batch.add(() => {
      delivered.push('first');
      batch.add(() => delivered.push('follow-up'));
    });
    endTurn();
    expect(delivered).toEqual(['first', 'follow-up']);
  });

  it('drain() delivers at once what is queued (shutdown)', () => {
    const { batch } = manualBatch();
    const delivered: string[] = [];
    batch.add(() => delivered.push('queued'));
    batch.drain();
    expect(delivered).toEqual(['queued']);
  });

  it('stops a turn once its time budget is spent and delivers the rest first in the next turn, in order', () => {
    const { batch, clock, endTurn, scheduled } = manualBatch(10);
    const delivered: string[] = [];
    // Each delivery takes 4 ms: the third passes the 10 ms budget, so the turn ends after it.
    const slow = (name: string) => () => {
      clock.ms += 4;
      delivered.push(name);
    };
    for (const name of ['a', 'b', 'c', 'd', 'e']) batch.add(slow(name));
    endTurn();
    expect(delivered).toEqual(['a', 'b', 'c']);
    expect(scheduled()).toBe(1);
    // What arrives in between waits behind what was left.
    batch.add(slow('late'));
    expect(scheduled()).toBe(1);
    endTurn();
    expect(delivered).toEqual(['a', 'b', 'c', 'd', 'e', 'late']);
    expect(scheduled()).toBe(0);
  });

  it('delivers at least one command a turn, however long each takes', () => {
    const { batch, clock, endTurn } = manualBatch(10);
    const delivered: string[] = [];
    for (const name of ['x', 'y']) {
      batch.add(() => {
        clock.ms += 50;
        delivered.push(name);
      });
    }
    endTurn();
    expect(delivered).toEqual(['x']);
    endTurn();
    expect(delivered).toEqual(['x', 'y']);
  });

  it('drain() delivers everything queued, past the budget (shutdown)', () => {
    const { batch, clock } = manualBatch(10);
    const delivered: number[] = [];
    for (let n = 0; n < 5; n += 1) {
      batch.add(() => {
        clock.ms += 20;
        delivered.push(n);
      });
    }
    batch.drain();
    expect(delivered).toEqual([0, 1, 2, 3, 4]);
  });

  it('keeps the order of a backlog carried over many turns', () => {
    const { batch, clock, endTurn, scheduled } = manualBatch(10);
    const delivered: number[] = [];
    for (let n = 0; n < 5000; n += 1) {
      batch.add(() => {
        clock.ms += 1;
        delivered.push(n);
      });
    }
    let turns = 0;
    while (scheduled() > 0) {
      endTurn();
      turns += 1;
    }
    expect(turns).toBe(500);
    expect(delivered).toEqual(Array.from({ length: 5000 }, (_, n) => n));
  });

  it('by default ends a turn with setImmediate: after the current callback and its promises, not during them', async () => {
    const batch = new CommandBatch(() => undefined);
    const seen: string[] = [];
    batch.add(() => seen.push('delivered'));
    await Promise.resolve();
    seen.push('microtasks done');
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual(['microtasks done', 'delivered']);
  });
});
