/**
 * `node bench/store-cost-worker.ts <checkouts> <rounds> <block>`: what the SQLite store costs per
 * ingested event, in process, for each built checkout in `<checkouts>` (comma-separated, `.` for
 * this one). Each checkout's store gets the ingestion bench's sessions (1,000, an event each to a
 * session picked at random, 25 events a commit as a loaded turn groups them) in blocks of `<block>`
 * events, the checkouts taking turns, so a machine that slows down or speeds up does so for all of
 * them. Prints one JSON line: per checkout, the main thread's CPU per event, the bytes written per
 * event (the process's, so the WAL checkpointer's too) and the journal applies' pauses by kind.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { StoredSession } from '../src/store/ports.js';
import type { SqliteStore } from '../src/store/sqlite-store.js';
const { benchSummary } = (await import(
  new URL('./lib/bench-summary.ts', import.meta.url).href
)) as typeof import('./lib/bench-summary.js');

const [checkoutList = '.', roundsArgument = '12', blockArgument = '4000'] = process.argv.slice(2);
const checkouts = checkoutList.split(',');
const ROUNDS = Number(roundsArgument);
const BLOCK = Number(blockArgument);
const SESSIONS = 1_000;
const EVENTS_PER_COMMIT = 25;
const START = 1_795_000_000_000;

/**
 * The state the service stored for the ingestion bench's event (bench/lib/event-body.ts), read
 * from a `STORE=sqlite` service's journal after five such events, with its hint beside it; each
 * event here renews what an event renews (the latest event, its times, the component's hint).
 */
const STORED = JSON.parse(readFileSync(new URL('fixtures/ingestion-session-state.json', import.meta.url), 'utf8')) as {
  value: unknown;
  context: Record<string, unknown> & { latest_event: object; component_hints: object[] };
};
const context = (sessionId: string, at: number, n: number): Record<string, unknown> => ({
  ...STORED.context,
  session_id: sessionId,
  created_at: START,
  latest_event: { ...STORED.context.latest_event, session_id: sessionId, timestamp: 1_795_000_000 + n },
  updated_at: at,
  last_user_activity_at: at,
  last_touched_at: at,
  component_hints: [{ ...STORED.context.component_hints[0], updated_at: at }],
});

/** What this worker reads of a store beyond its ports: the journal apply, to time it (older checkouts lack the split counters). */
interface Instrumented {
  applyJournal: (...args: unknown[]) => void;
  journal: { pending: number; pendingSessionRows?: number };
}

const writtenBytes = (): number => Number(/wchar: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))![1]);

async function target(checkout: string) {
  const built = pathToFileURL(resolve(checkout, 'dist/src/store/sqlite-store.js')).href;
  const { SqliteStore: Store } = (await import(built)) as { SqliteStore: typeof SqliteStore };
  const dataDir = mkdtempSync(join(tmpdir(), 'kyc-bench-store-cost-'));
  const store = new Store({ dataDir, sync: 'normal', retentionItems: 1_000_000, retentionDays: 0, now: () => START });
  const pauses = { items: [] as number[], sessions: [] as number[] };
  const inner = store as unknown as Instrumented;
  const apply = inner.applyJournal.bind(store);
  inner.applyJournal = (...args: unknown[]) => {
    const sessionRows = () => inner.journal.pendingSessionRows ?? inner.journal.pending;
    const before = sessionRows();
    const at = performance.now();
    apply(...args);
    const took = performance.now() - at;
    if (took > 0.2) (before > 0 && sessionRows() === 0 ? pauses.sessions : pauses.items).push(took);
  };
  let n = 0;
  let random = 42;
  const next = () => (random = (random * 1_664_525 + 1_013_904_223) >>> 0) / 2 ** 32;
  const events = async (count: number) => {
    for (let i = 0; i < count; i += 1, n += 1) {
      const sessionId = `bench-${Math.floor(next() * SESSIONS)}`;
      const at = START + n;
      const stored: StoredSession = {
        session_id: sessionId,
        value: STORED.value,
        context: context(sessionId, at, n),
        wake_at: START + 86_400_000,
        summary: benchSummary(START, at),
      };
      store.save(sessionId, () => stored);
      store.append({
        kind: 'event',
        at,
        session_id: sessionId,
        user_id: 'user-42',
        payload: { event: 'component_input', screen: 'pan_details', component_id: 'pan_field', hint: '******234F' },
        trace: { trace_id: '4b3014065a2771cbf8e2f6b19572785f', request_id: `bench-${n}` },
      });
      if ((i + 1) % EVENTS_PER_COMMIT === 0) await store.commit();
    }
    await store.commit();
  };
  return {
    checkout,
    events,
    pauses,
    measured: { cpuMicros: 0, bytes: 0, events: 0 },
    close() {
      store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const targets = await Promise.all(checkouts.map(target));
// Every session saved, the caches and the code warm, before anything is counted.
for (const each of targets) await each.events(10 * SESSIONS);
for (const each of targets) each.pauses.items.length = each.pauses.sessions.length = 0;
for (let r = 0; r < ROUNDS; r += 1) {
  // Turns in a rotating order, so none is always first after another's apply.
  for (let k = 0; k < targets.length; k += 1) {
    const each = targets[(r + k) % targets.length]!;
    const cpu = process.threadCpuUsage();
    const bytes = writtenBytes();
    await each.events(BLOCK);
    const used = process.threadCpuUsage(cpu);
    each.measured.cpuMicros += used.user + used.system;
    each.measured.bytes += writtenBytes() - bytes;
    each.measured.events += BLOCK;
  }
}
const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
const summary = (values: number[]) => {
  const ordered = sorted(values);
  return { count: ordered.length, median_ms: ordered[ordered.length >> 1] ?? 0, max_ms: ordered.at(-1) ?? 0 };
};
console.log(
  JSON.stringify(
    targets.map((each) => ({
      checkout: each.checkout,
      cpu_us_per_event: each.measured.cpuMicros / each.measured.events,
      bytes_per_event: each.measured.bytes / each.measured.events,
      events: each.measured.events,
      items_only_applies: summary(each.pauses.items),
      session_applies: summary(each.pauses.sessions),
    })),
  ),
);
for (const each of targets) each.close();
