import { describe, expect, it } from 'vitest';
import type { CopyTurn } from '../../src/http/replay-window.js';
import { ENTRY_OVERHEAD_BYTES, ReplayWindow } from '../../src/http/replay-window.js';

const windowOf = () => new ReplayWindow<string>({ windowMs: 60_000, maxBytes: 1 << 20, now: () => 0 });

/** The copies' turns once the first has settled, and what each copy that runs answers. */
async function copiesAfter(
  firstAnswer: string | undefined,
  copies: number,
): Promise<{ ran: number; answers: string[] }> {
  const window = windowOf();
  const first = window.check('id', 'same request');
  if (first.kind !== 'first') throw new Error('the first of its id must run');
  let ran = 0;
  const copy = async (): Promise<string> => {
    const check = window.check('id', 'same request');
    if (check.kind !== 'replay') throw new Error(`a copy must wait, got ${check.kind}`);
    const turn: CopyTurn<string> = await window.afterFirst('id', 'same request', check.answer);
    if (turn.kind === 'answer') return turn.answer;
    if (turn.kind === 'conflict') throw new Error('not a different request');
    ran += 1;
    // The copy runs as a first would: its answer comes later, while the other copies wait.
    await Promise.resolve();
    turn.settle(`copy ${ran}`);
    return `copy ${ran}`;
  };
  // Every copy is waiting before the first settles: the race a cut connection leaves behind.
  const waiting = Array.from({ length: copies }, copy);
  first.settle(firstAnswer);
  const answers = await Promise.all(waiting);
  return { ran, answers };
}

describe('ReplayWindow: copies of one request id', () => {
  it('get the first answer when it has one, and none of them runs', async () => {
    const { ran, answers } = await copiesAfter('first', 4);
    expect(ran).toBe(0);
    expect(answers).toEqual(['first', 'first', 'first', 'first']);
  });

  it('when the first was refused or cut, run one at a time: one copy runs and the rest get its answer', async () => {
    const { ran, answers } = await copiesAfter(undefined, 4);
    expect(ran).toBe(1);
    expect(answers).toEqual(['copy 1', 'copy 1', 'copy 1', 'copy 1']);
  });

  it('a copy that runs and is refused in turn hands the turn to the next copy', async () => {
    const window = windowOf();
    const first = window.check('id', 'r');
    if (first.kind !== 'first') throw new Error('the first of its id must run');
    const [one, two] = [0, 1].map(() => {
      const check = window.check('id', 'r');
      if (check.kind !== 'replay') throw new Error('a copy must wait');
      return window.afterFirst('id', 'r', check.answer);
    });
    let secondTurned = false;
    void two!.then(() => (secondTurned = true));
    first.settle(undefined);
    const turn = await one!;
    if (turn.kind !== 'first') throw new Error(`the first copy must run, got ${turn.kind}`);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(secondTurned).toBe(false);
    turn.settle(undefined);
    expect((await two!).kind).toBe('first');
  });
});

describe('ReplayWindow: what it keeps', () => {
  /**
   * Sends ids 0..count-1 with answers of `answerBytes`; the ids a copy still finds, newest first,
   * up to the first it does not (a check that misses is a first: it would be kept in turn).
   */
  const keptAfter = (maxBytes: number, count: number, answerBytes: number): number[] => {
    const window = new ReplayWindow<string>({ windowMs: 60_000, maxBytes, now: () => 0 });
    for (let id = 0; id < count; id++) {
      const check = window.check(String(id), 'r');
      if (check.kind !== 'first') throw new Error(`id ${id} is new`);
      check.settle('answer', answerBytes);
    }
    const kept: number[] = [];
    for (let id = count - 1; id >= 0 && window.check(String(id), 'r').kind === 'replay'; id--) kept.unshift(id);
    return kept;
  };

  it('holds answers up to its bytes, each counted with its overhead, the oldest going first', () => {
    // Ten answers of 744 bytes are 10,000 bytes counted: a bound of 8,000 keeps the newest eight.
    expect(keptAfter(8_000, 10, 1_000 - ENTRY_OVERHEAD_BYTES)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('bounds the number of answers by the bytes alone: empty answers still count their overhead', () => {
    expect(keptAfter(ENTRY_OVERHEAD_BYTES * 50, 60, 0)).toHaveLength(50);
  });
});
