import { describe, expect, it } from 'vitest';
import type { CopyTurn } from '../../src/http/replay-window.js';
import { ReplayWindow } from '../../src/http/replay-window.js';

const windowOf = () => new ReplayWindow<string>({ windowMs: 60_000, maxEntries: 100, maxBytes: 1 << 20, now: () => 0 });

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
