import { describe, expect, it } from 'vitest';
import { EVICTION_BATCH } from '../../src/actor-system/residency.js';
import { redactForIngest } from '../../src/domain/event-redaction.js';
import { EventInSchema } from '../../src/domain/sdk-event.js';
import { ingestSdkEvent } from '../../src/use-cases/ingest-sdk-event.js';
import { startVoice } from '../../src/use-cases/voice-call.js';
import type { Harness } from '../support/harness.js';
import { advance, createHarness } from '../support/harness.js';

const CAP = 600;
const SECOND = 1000;

/** New sessions of one event each, `lanes` asked in one turn at a time, as a flood sends them. */
async function newSessions(h: Harness, prefix: string, count: number, lanes = 100): Promise<void> {
  for (let from = 0; from < count; from += lanes) {
    const answers = await Promise.all(
      Array.from({ length: Math.min(lanes, count - from) }, (_, i) => {
        const raw = { session_id: `${prefix}-${from + i}`, event: 'screen_state', screen: 'pan_details' };
        return ingestSdkEvent(h.system.sessionHost, raw.session_id, redactForIngest(EventInSchema.parse(raw)), {
          trace_id: 't',
          request_id: 'r',
        });
      }),
    );
    expect(answers.every((answer) => answer.ok)).toBe(true);
  }
}

/**
 * Counts the reads of the store's recency order (each settles the store: a commit and an apply of
 * its journal with SQLite) and the rows they read: each one walked, or, from a store that hands
 * them over at once, every one it read.
 */
function rowsRead(h: Harness): { reads: number; rows: number } {
  const store = h.store.sessions;
  const read = store.leastRecent.bind(store) as (...args: unknown[]) => Iterable<string>;
  const tally = { reads: 0, rows: 0 };
  store.leastRecent = ((...args: unknown[]) => {
    tally.reads += 1;
    const rows = read(...args);
    if (Array.isArray(rows)) {
      tally.rows += rows.length;
      return rows;
    }
    return (function* () {
      for (const id of rows) {
        tally.rows += 1;
        yield id;
      }
    })();
  }) as typeof store.leastRecent;
  return tally;
}

describe('MAX_SESSIONS: a new session at the cap costs a bounded walk, never one over every session held', () => {
  it('with every session running, nothing is read from the store: the least recently touched running one goes', async () => {
    const h = createHarness({ env: { MAX_SESSIONS: String(CAP), SESSION_HIBERNATE_SECONDS: '60' } });
    await newSessions(h, 'old', CAP);
    const tally = rowsRead(h);
    await newSessions(h, 'new', 200);
    expect(tally).toEqual({ reads: 0, rows: 0 });
    expect(h.system.sessionHost.counts).toEqual({ running: CAP, hibernated: 0 });
    // The 200 least recently touched went, and no other.
    expect(['old-0', 'old-199', 'old-200', 'new-0', 'new-199'].map((id) => h.system.sessionHost.has(id))).toEqual([
      false,
      false,
      true,
      true,
      true,
    ]);
  });

  it(
    'with hibernated sessions older than the running ones, one read of EVICTION_BATCH rows ' +
      'serves as many new sessions, each evicting the oldest hibernated',
    async () => {
      const h = createHarness({ env: { MAX_SESSIONS: String(CAP), SESSION_HIBERNATE_SECONDS: '60' } });
      await newSessions(h, 'idle', 300);
      advance(h.clock, 61 * SECOND);
      await newSessions(h, 'busy', CAP - 300);
      expect(h.system.sessionHost.counts).toEqual({ running: CAP - 300, hibernated: 300 });
      const tally = rowsRead(h);
      await newSessions(h, 'new', 200);
      // Before: every spawn at the cap settled the store and read `running + 1` rows (301 here, 100,000 at the defaults).
      expect(tally).toEqual({ reads: 1, rows: EVICTION_BATCH });
      expect(h.system.sessionHost.counts).toEqual({ running: CAP - 300 + 200, hibernated: 100 });
      expect(['idle-0', 'idle-199', 'idle-200', 'busy-0', 'new-199'].map((id) => h.system.sessionHost.has(id))).toEqual(
        [false, false, true, true, true],
      );
    },
  );

  it('evicting a hibernated session reads none of it back: a new session at the cap loads from the store once, its own miss', async () => {
    const h = createHarness({ env: { MAX_SESSIONS: String(CAP), SESSION_HIBERNATE_SECONDS: '60' } });
    await newSessions(h, 'idle', 300);
    advance(h.clock, 61 * SECOND);
    await newSessions(h, 'busy', CAP - 300);
    const store = h.store.sessions;
    const load = store.load.bind(store);
    const loaded: string[] = [];
    store.load = (sessionId) => {
      loaded.push(sessionId);
      return load(sessionId);
    };
    await newSessions(h, 'new', 200);
    // Before: each eviction read its session back and parsed it, only to learn that it was held.
    expect(loaded).toEqual(Array.from({ length: 200 }, (_, n) => `new-${n}`));
    expect(h.system.sessionHost.counts).toEqual({ running: CAP - 300 + 200, hibernated: 100 });
    store.load = load;
    expect(['idle-0', 'idle-199', 'idle-200'].map((id) => h.system.sessionHost.has(id))).toEqual([false, false, true]);
  });

  it('past EVICTION_BATCH running sessions older than every hibernated one, the least recently touched inactive running one goes', async () => {
    const h = createHarness({ env: { MAX_SESSIONS: String(CAP), SESSION_HIBERNATE_SECONDS: '60' } });
    // Sessions in voice stay running, however long untouched: older than every hibernated one.
    const calls = EVICTION_BATCH + 6;
    const started = await Promise.all(
      Array.from({ length: calls }, (_, n) =>
        startVoice(
          h.system.sessionHost,
          `call-${n}`,
          { trace: { trace_id: 't', request_id: 'r' }, user_id: null, screen: 'pan_details' },
          h.system.tokens,
        ),
      ),
    );
    expect(started.every((answer) => answer.ok && 'room' in answer.value)).toBe(true);
    advance(h.clock, SECOND);
    await newSessions(h, 'idle', 100);
    advance(h.clock, 61 * SECOND);
    await newSessions(h, 'fill', CAP - calls - 100);
    expect(h.system.sessionHost.counts).toEqual({ running: CAP - 100, hibernated: 100 });
    const tally = rowsRead(h);
    await newSessions(h, 'new', 50);
    // One read found none to evict; the next EVICTION_BATCH new sessions do not read again.
    expect(tally).toEqual({ reads: 1, rows: EVICTION_BATCH });
    expect(h.system.sessionHost.size).toBe(CAP);
    // No call was evicted; the oldest running sessions out of voice made room.
    expect(Array.from({ length: calls }, (_, n) => h.system.sessionHost.has(`call-${n}`)).every(Boolean)).toBe(true);
    expect(['fill-0', 'fill-49', 'fill-50', 'new-49'].map((id) => h.system.sessionHost.has(id))).toEqual([
      false,
      false,
      true,
      true,
    ]);
  });
});
