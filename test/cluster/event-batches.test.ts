import { describe, expect, it } from 'vitest';
import type { BatchedEvent } from '../../src/cluster/event-batches.js';
import { SessionBatches } from '../../src/cluster/event-batches.js';

/** A send the test completes by hand: each batch waits until `release` answers it. */
function manualSend() {
  const sent: { sessionId: string; events: string[]; keys: (string | undefined)[]; release: (fail?: Error) => void }[] =
    [];
  const send = (sessionId: string, batch: readonly BatchedEvent<string>[]) =>
    new Promise<string[]>((resolve, reject) => {
      sent.push({
        sessionId,
        events: batch.map((entry) => entry.event),
        keys: batch.map((entry) => entry.key),
        release: (fail) => (fail ? reject(fail) : resolve(batch.map((entry) => `taken ${entry.event}`))),
      });
    });
  return { sent, send };
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));
const event = (name: string, key?: string, bytes = 10): BatchedEvent<string> => ({ event: name, bytes, key });

describe('SessionBatches', () => {
  it('sends a session’s first event at once, alone', async () => {
    const { sent, send } = manualSend();
    const batches = new SessionBatches(send);
    const answer = batches.submit('s1', event('a'));
    expect(sent.map((batch) => batch.events)).toEqual([['a']]);
    sent[0]!.release();
    await expect(answer).resolves.toBe('taken a');
  });

  it('sends the events that arrived during a send together, in order, each answered as itself', async () => {
    const { sent, send } = manualSend();
    const batches = new SessionBatches(send);
    const answers = ['a', 'b', 'c', 'd'].map((name) => batches.submit('s1', event(name)));
    expect(sent).toHaveLength(1);
    sent[0]!.release();
    await flush();
    expect(sent.map((batch) => batch.events)).toEqual([['a'], ['b', 'c', 'd']]);
    const e = batches.submit('s1', event('e'));
    sent[1]!.release();
    await flush();
    expect(sent.map((batch) => batch.events)).toEqual([['a'], ['b', 'c', 'd'], ['e']]);
    sent[2]!.release();
    await expect(Promise.all([...answers, e])).resolves.toEqual([
      'taken a',
      'taken b',
      'taken c',
      'taken d',
      'taken e',
    ]);
    expect(batches.totals()).toEqual({ batches: 3, events: 5 });
  });

  it('sends an event the client named alone, with its key, keeping the order around it', async () => {
    const { sent, send } = manualSend();
    const batches = new SessionBatches(send);
    for (const [name, key] of [['a'], ['b'], ['c', 'k1'], ['d'], ['e', 'k2'], ['f', 'k3']] as const)
      void batches.submit('s1', event(name, key));
    for (let round = 0; round < 5; round += 1) {
      sent[round]!.release();
      await flush();
    }
    expect(sent.map((batch) => batch.events)).toEqual([['a'], ['b'], ['c'], ['d'], ['e'], ['f']]);
    expect(sent.map((batch) => batch.keys)).toEqual([[undefined], [undefined], ['k1'], [undefined], ['k2'], ['k3']]);
  });

  it('keeps a batch within its count and its bytes', async () => {
    const { sent, send } = manualSend();
    const batches = new SessionBatches(send, { maxEvents: 3, maxBytes: 100 });
    void batches.submit('s1', event('first'));
    for (const name of ['a', 'b', 'c', 'd']) void batches.submit('s1', event(name));
    void batches.submit('s1', event('big1', undefined, 60));
    void batches.submit('s1', event('big2', undefined, 60));
    void batches.submit('s1', event('huge', undefined, 500));
    for (let round = 0; round < 5; round += 1) {
      sent[round]!.release();
      await flush();
    }
    expect(sent.map((batch) => batch.events)).toEqual([['first'], ['a', 'b', 'c'], ['d', 'big1'], ['big2'], ['huge']]);
  });

  it('never makes one session wait for another’s send', () => {
    const { sent, send } = manualSend();
    const batches = new SessionBatches(send);
    void batches.submit('s1', event('a'));
    void batches.submit('s2', event('b'));
    void batches.submit('s1', event('c'));
    expect(sent.map((batch) => [batch.sessionId, batch.events])).toEqual([
      ['s1', ['a']],
      ['s2', ['b']],
    ]);
  });

  it('fails every event of a batch whose send threw, and still sends those that waited behind it', async () => {
    const { sent, send } = manualSend();
    const batches = new SessionBatches(send);
    const first = batches.submit('s1', event('a'));
    const second = batches.submit('s1', event('b'));
    sent[0]!.release(new Error('ingress gone'));
    await expect(first).rejects.toThrow('ingress gone');
    await flush();
    expect(sent.map((batch) => batch.events)).toEqual([['a'], ['b']]);
    sent[1]!.release();
    await expect(second).resolves.toBe('taken b');
    // Nothing left waiting: the session's next event is sent at once.
    void batches.submit('s1', event('c'));
    expect(sent).toHaveLength(3);
  });
});
