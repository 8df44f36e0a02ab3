/**
 * `node bench/apply-worker.ts <items> <batches> [held]`: the SQLite store's journal apply as the
 * activity log grows. A store in a temp directory is given `held` sessions (default 1,000, saved
 * once each, the first 1,000 of them the active ones), then filled with `items` commands (each a
 * session saved and an item appended, over the 1,000 active sessions, committed 50 at a time,
 * applied as the store does every 2,000 rows); then, `batches` times, 999 more commands are
 * committed and a read that needs the tables (`count()`) applies them: that read's time is the
 * apply's. Also times a session's newest 50 items (`list`). Prints `{apply_ms, list_ms}` (medians).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoredSession } from '../src/store/ports.js';

const built = (path: string) => new URL(`../dist/src/${path}`, import.meta.url).href;
const { SqliteStore } = (await import(built('store/sqlite-store.js'))) as typeof import('../src/store/sqlite-store.js');
const { median } = (await import(new URL('./lib/stats.ts', import.meta.url).href)) as typeof import('./lib/stats.js');
const { benchSummary } = (await import(
  new URL('./lib/bench-summary.ts', import.meta.url).href
)) as typeof import('./lib/bench-summary.js');

const [items, batches, held = 1_000] = process.argv.slice(2).map(Number) as [number, number, number?];
const SESSIONS = 1_000;
const START = 1_795_000_000_000;

// A bench session's stored form: about the 1.3 KB state and 0.3 KB item of the ingestion bench.
const stored = (sessionId: string, n: number): StoredSession => ({
  session_id: sessionId,
  value: { voice: 'inactive', trigger: 'ready', presence: 'live', reengagement: 'idle' },
  context: { session_id: sessionId, latest_event: { event: 'component_input', n, padding: 'x'.repeat(1_150) } },
  wake_at: START + 60_000 + n,
  summary: benchSummary(START, START + n),
});

const dataDir = mkdtempSync(join(tmpdir(), 'kyc-bench-apply-'));
const store = new SqliteStore({
  dataDir,
  sync: 'normal',
  retentionItems: 1_000_000,
  retentionDays: 0,
  now: () => START,
});
let n = 0;
async function commands(count: number): Promise<void> {
  for (let i = 0; i < count; i += 1, n += 1) {
    const sessionId = `bench-${(n * 7919) % SESSIONS}`;
    store.save(sessionId, () => stored(sessionId, n));
    store.append({
      kind: 'event',
      at: START + n,
      session_id: sessionId,
      user_id: null,
      payload: { n, padding: 'y'.repeat(150) },
      trace: { trace_id: `t${n}`, request_id: `r${n}` },
    });
    if ((i + 1) % 50 === 0) await store.commit();
  }
  await store.commit();
}
try {
  for (let i = 0; i < held; i += 1) {
    const sessionId = `bench-${i}`;
    store.save(sessionId, () => stored(sessionId, i));
    if ((i + 1) % 50 === 0) await store.commit();
  }
  await commands(items);
  store.count();
  const applies: number[] = [];
  const lists: number[] = [];
  for (let batch = 0; batch < batches; batch += 1) {
    await commands(999);
    const at = performance.now();
    store.count();
    applies.push(performance.now() - at);
    for (let k = 0; k < 20; k += 1) {
      const listAt = performance.now();
      store.list({ sessionId: `bench-${(batch * 37 + k) % SESSIONS}`, limit: 50 });
      lists.push(performance.now() - listAt);
    }
  }
  console.log(JSON.stringify({ apply_ms: median(applies), list_ms: median(lists) }));
} finally {
  store.close();
  rmSync(dataDir, { recursive: true, force: true });
}
