import { describe, expect, it } from 'vitest';
import { CommandBatch } from '../../src/actor-system/command-batch.js';

/** A batch whose turn ends when the test says so. */
function manualBatch() {
  const turns: (() => void)[] = [];
  const errors: unknown[] = [];
  const batch = new CommandBatch(
    (error) => errors.push(error),
    (drain) => turns.push(drain),
  );
  return { batch, errors, endTurn: () => turns.splice(0).forEach((drain) => drain()), scheduled: () => turns.length };
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
